import type { RealmState } from '../state.ts';
import type { LinkifierChange } from './changes.ts';
import { recompile } from './state.ts';

export function applyLinkifierChange(state: RealmState, change: LinkifierChange): void {
  const store = state.linkifiers;
  switch (change.type) {
    case 'linkifier.added':
      store.list.push({ ...change.linkifier });
      store.nextId = Math.max(store.nextId, change.linkifier.id + 1);
      break;
    case 'linkifier.updated':
      store.list = store.list.map((linkifier) => (linkifier.id === change.linkifier.id ? { ...change.linkifier } : linkifier));
      break;
    case 'linkifier.removed':
      store.list = store.list.filter((linkifier) => linkifier.id !== change.id);
      break;
    case 'linkifiers.reordered': {
      const byId = new Map(store.list.map((linkifier) => [linkifier.id, linkifier]));
      store.list = change.order.flatMap((id) => byId.get(id) ?? []);
      break;
    }
  }
  recompile(store);
}
