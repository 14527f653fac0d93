/** One message change the full-text index takes: a message's text, a new content or topic, a removal. */
export type IndexOp =
  | { kind: 'put'; realmId: number; id: number; content: string; topic: string }
  | { kind: 'content'; realmId: number; id: number; content: string }
  | { kind: 'topic'; realmId: number; id: number; topic: string }
  | { kind: 'delete'; realmId: number; id: number };
