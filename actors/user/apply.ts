import type { UserChange } from './changes.ts';
import type { UserState } from './state.ts';

/** Applies one fact to a user's state, in place; the same code runs live and during log replay. */
export function applyUserChange(state: UserState, change: UserChange): void {
  switch (change.type) {
    case 'snippet.created':
      state.snippets.set(change.snippet.id, { ...change.snippet });
      state.nextSnippetId = Math.max(state.nextSnippetId, change.snippet.id + 1);
      return;
    case 'snippet.edited': {
      const snippet = state.snippets.get(change.id);
      if (!snippet) return;
      if (change.title !== undefined) snippet.title = change.title;
      if (change.content !== undefined) snippet.content = change.content;
      return;
    }
    case 'snippet.deleted':
      state.snippets.delete(change.id);
      return;
  }
}
