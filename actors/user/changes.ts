import type { SavedSnippet } from './state.ts';

/** Facts about one user's personal state; `applyUserChange` is the only reader. */
export type UserChange =
  | { type: 'snippet.created'; snippet: SavedSnippet }
  | { type: 'snippet.edited'; id: number; title?: string; content?: string }
  | { type: 'snippet.deleted'; id: number };
