import type { RealmState } from '../state.ts';
import type { RealmDomainChange } from './changes.ts';

export function applyRealmDomainChange(state: RealmState, change: RealmDomainChange): void {
  switch (change.type) {
    case 'realm_domain.added':
      state.domains = [...state.domains, { ...change.domain }];
      break;
    case 'realm_domain.changed':
      state.domains = state.domains.map((entry) => (entry.domain === change.domain.domain ? { ...change.domain } : entry));
      break;
    case 'realm_domain.removed':
      state.domains = state.domains.filter((entry) => entry.domain !== change.domain);
      break;
    default: {
      const unknown: never = change;
      throw new Error(`unknown realm domain change ${JSON.stringify(unknown)}`);
    }
  }
}
