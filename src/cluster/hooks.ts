import type { ApiRequest, ApiResponse } from '../http/request.ts';
import type { SocketHandler } from '../http/socket.ts';
import type { SharedFiles } from '../uploads.ts';

/**
 * What the request pipeline (http/dispatch.ts) asks of the cluster this node belongs to; src/cluster/node.ts
 * implements it over NATS. Absent in a single process, which then takes none of these steps.
 */
export interface ClusterHooks {
  readonly nodeId: string;
  isPrimary(): boolean;
  /**
   * At a replica: resolves once this node has applied every record the primary had committed when it was
   * called (one look-up of the stream's position, shared by the calls that wait for it); throws 503 past
   * the configured wait. At the primary: at once.
   */
  caughtUp(): Promise<void>;
  /** Removes the mark of a request forwarded by another node; returns whether it had one (it goes no further). */
  takeForwardMark(request: ApiRequest): boolean;
  /** A write that reached a replica: the primary's answer, given once this node has applied its result. */
  forwardToPrimary(request: ApiRequest): Promise<ApiResponse>;
  /** A poll or removal of a queue of another node: that node's answer (BAD_EVENT_QUEUE_ID if it is gone). */
  forwardToNode(nodeId: string, queueId: string, request: ApiRequest): Promise<ApiResponse>;
  /**
   * An event WebSocket for a queue of another node: relayed to that node, with these credentials (closed
   * with BAD_EVENT_QUEUE_ID if it is gone).
   */
  forwardSocket(nodeId: string, queueId: string, request: ApiRequest, authorization: string): SocketHandler;
  /** the organization's files, kept in the cluster so that any node serves them */
  readonly files: SharedFiles;
  /** for /health */
  health(): Record<string, unknown>;
}
