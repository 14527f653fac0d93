import type { SavedSnippet } from './state.ts';

export const snippetView = (snippet: SavedSnippet) => ({
  id: snippet.id,
  title: snippet.title,
  content: snippet.content,
  date_created: snippet.dateCreated,
});
