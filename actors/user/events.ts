import type { Delivery } from '../events.ts';
import type { UserChange } from './changes.ts';
import type { UserState } from './state.ts';
import { snippetView } from './views.ts';

/** The events a personal change announces: only to the user's own queues. */
export function userEvents(state: UserState, change: UserChange): Delivery[] {
  const toSelf = (event: Delivery['event']): Delivery[] => [
    { realmId: state.realmId, audience: { kind: 'users', userIds: [state.userId] }, event },
  ];
  switch (change.type) {
    case 'snippet.created':
    case 'snippet.edited': {
      const snippet = state.snippets.get(change.type === 'snippet.created' ? change.snippet.id : change.id);
      if (!snippet) return [];
      return toSelf({ type: 'saved_snippets', op: change.type === 'snippet.created' ? 'add' : 'update', saved_snippet: snippetView(snippet) });
    }
    case 'snippet.deleted':
      return toSelf({ type: 'saved_snippets', op: 'remove', saved_snippet_id: change.id });
  }
}
