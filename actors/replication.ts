import { ChatError, ErrorCode } from './errors.ts';
import type { Delivery } from './events.ts';
import type { PresenceStatus } from './presence/store.ts';

/**
 * What the runtime asks of a cluster (src/cluster/): whether this node may write now. A replica's commits
 * throw NotPrimary before applying anything, so that the front end can hand the request to the primary;
 * the primary's commits go through the log as always (its Persistence also appends them to the cluster's
 * stream). Absent in a single process.
 */
export interface Replication {
  /** whether this node is the cluster's primary (the one writer) right now */
  isPrimary(): boolean;
  /** this node's name: it begins the ids of the event queues it holds (`NODE:uuid`) */
  readonly nodeId: string;
  /** Hands what changes no state and is never logged (typing, presence) to the other nodes (Runtime.receiveShared). */
  share(message: Shared): void;
}

/** What one node tells the others outside the log: events for their queues, and presence reports. */
export type Shared =
  | { kind: 'deliveries'; deliveries: Delivery[] }
  | { kind: 'presence'; realmId: number; userId: number; status: PresenceStatus; now: number };

/** Thrown by a write at a replica, before it changed anything: the request belongs to the primary. */
export class NotPrimary extends ChatError {
  constructor() {
    super(ErrorCode.INTERNAL_SERVER_ERROR, 'This node is not the primary of its cluster; no primary took the write', 503);
  }
}

/** The node a queue id names (`NODE:uuid`), or null for an id of a single process (a bare uuid). */
export function queueNode(queueId: string): string | null {
  const colon = queueId.indexOf(':');
  return colon > 0 ? queueId.slice(0, colon) : null;
}
