import { badRequest } from '../../errors.ts';
import type { RealmState } from '../state.ts';
import type { LinkifierChange } from './changes.ts';
import type { LinkifierCommand } from './commands.ts';
import { requireAdmin } from '../administer.ts';
import { checkLinkifier } from './validate.ts';

const notFound = () => badRequest('Linkifier not found.');

/** Linkifiers are the administrators' to change. */
export function decideLinkifier(state: RealmState, command: LinkifierCommand): LinkifierChange[] {
  requireAdmin(state, command.caller);
  const store = state.linkifiers;
  switch (command.type) {
    case 'linkifier.add': {
      // Each runs on every message rendered, and RE2 lets each compiled pattern grow to ~8 MB.
      if (store.list.length >= command.maxLinkifiers) throw badRequest(`This organization already has ${command.maxLinkifiers} linkifiers, the most it may have`);
      const checked = checkLinkifier(store, command.pattern, command.urlTemplate, null);
      return [{ type: 'linkifier.added', linkifier: { id: store.nextId, ...checked } }];
    }
    case 'linkifier.update': {
      if (!store.list.some((linkifier) => linkifier.id === command.id)) throw notFound();
      const checked = checkLinkifier(store, command.pattern, command.urlTemplate, command.id);
      return [{ type: 'linkifier.updated', linkifier: { id: command.id, ...checked } }];
    }
    case 'linkifier.remove':
      if (!store.list.some((linkifier) => linkifier.id === command.id)) throw notFound();
      return [{ type: 'linkifier.removed', id: command.id }];
    case 'linkifier.reorder': {
      const order = new Set(command.order);
      if (order.size < command.order.length) throw badRequest('The ordered list must not contain duplicated linkifiers');
      if (order.size !== store.list.length || store.list.some((linkifier) => !order.has(linkifier.id))) {
        throw badRequest('The ordered list must enumerate all existing linkifiers exactly once');
      }
      // The same order changes nothing and announces nothing.
      if (command.order.every((id, i) => store.list[i]!.id === id)) return [];
      return [{ type: 'linkifiers.reordered', order: [...command.order] }];
    }
  }
}
