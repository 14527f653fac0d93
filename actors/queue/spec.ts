/** What a client asked for when it registered its queue; fixed for the queue's life. */
export interface QueueSpec {
  /** null: every event type */
  eventTypes: string[] | null;
  allPublicStreams: boolean;
  narrow: [string, string][];
  capabilities: Record<string, boolean>;
  /** presence events without the email (absent in queues saved before it existed: false) */
  slimPresence?: boolean;
  applyMarkdown: boolean;
  clientExtavatar: boolean;
  /** garbage-collect after this long without a poll starting */
  idleTimeoutMs: number;
}

export interface QueueContext {
  queueId: string;
  realmId: number;
  userId: number;
  spec: QueueSpec;
  /** UNIX ms */
  createdAt: number;
}
