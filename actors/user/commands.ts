/** Commands a user sends to its own actor. */
export type UserCommand =
  | { type: 'snippet.create'; title: string; content: string }
  | { type: 'snippet.edit'; id: number; title?: string; content?: string }
  | { type: 'snippet.delete'; id: number };
