/**
 * The closed set of error codes the API answers with, and the one error class that carries them.
 * The HTTP front end turns a ChatError into the Zulip error envelope in one place.
 */
export const ErrorCode = {
  BAD_REQUEST: 'BAD_REQUEST',
  REQUEST_VARIABLE_MISSING: 'REQUEST_VARIABLE_MISSING',
  REQUEST_VARIABLE_INVALID: 'REQUEST_VARIABLE_INVALID',
  UNAUTHORIZED: 'UNAUTHORIZED',
  INVALID_API_KEY: 'INVALID_API_KEY',
  USER_DEACTIVATED: 'USER_DEACTIVATED',
  REALM_DEACTIVATED: 'REALM_DEACTIVATED',
  AUTHENTICATION_FAILED: 'AUTHENTICATION_FAILED',
  NONEXISTENT_SUBDOMAIN: 'NONEXISTENT_SUBDOMAIN',
  UNAUTHORIZED_PRINCIPAL: 'UNAUTHORIZED_PRINCIPAL',
  RATE_LIMIT_HIT: 'RATE_LIMIT_HIT',
  /** a browser request from a page of another site (Zulip's answer to a failed CSRF check) */
  CSRF_FAILED: 'CSRF_FAILED',
  BAD_EVENT_QUEUE_ID: 'BAD_EVENT_QUEUE_ID',
  STREAM_DOES_NOT_EXIST: 'STREAM_DOES_NOT_EXIST',
  MOVE_MESSAGES_TIME_LIMIT_EXCEEDED: 'MOVE_MESSAGES_TIME_LIMIT_EXCEEDED',
  STREAM_WILDCARD_MENTION_NOT_ALLOWED: 'STREAM_WILDCARD_MENTION_NOT_ALLOWED',
  TOPIC_WILDCARD_MENTION_NOT_ALLOWED: 'TOPIC_WILDCARD_MENTION_NOT_ALLOWED',
  CANNOT_DEACTIVATE_GROUP_IN_USE: 'CANNOT_DEACTIVATE_GROUP_IN_USE',
  /** DELETE /users/me by the only active user or owner; carries `entity` and `is_last_owner` */
  CANNOT_DEACTIVATE_LAST_USER: 'CANNOT_DEACTIVATE_LAST_USER',
  REACTION_ALREADY_EXISTS: 'REACTION_ALREADY_EXISTS',
  REACTION_DOES_NOT_EXIST: 'REACTION_DOES_NOT_EXIST',
  /** a narrow names an unknown operator or operand; carries `desc` */
  BAD_NARROW: 'BAD_NARROW',
  /** some invitations were not sent; carries `errors`, `sent_invitations` and the limit flags */
  INVITATION_FAILED: 'INVITATION_FAILED',
  /** an upload would take the organization's (or the user's) files past their quota */
  REALM_UPLOAD_QUOTA: 'REALM_UPLOAD_QUOTA',
  /** a mobile push operation on a server with no push notification service (the original's bouncer) */
  PUSH_SERVICE_NOT_CONFIGURED: 'PUSH_SERVICE_NOT_CONFIGURED',
  /** a test notification for a device token the user has not registered */
  INVALID_PUSH_DEVICE_TOKEN: 'INVALID_PUSH_DEVICE_TOKEN',
  /** an E2EE test notification for a user with no registered E2EE device */
  NO_ACTIVE_PUSH_DEVICE: 'NO_ACTIVE_PUSH_DEVICE',
  /** the original's: clients start the video call service's OAuth again on it */
  INVALID_ZOOM_TOKEN: 'INVALID_ZOOM_TOKEN',
  INTERNAL_SERVER_ERROR: 'INTERNAL_SERVER_ERROR',
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export type ErrorExtra = Record<string, unknown>;

export class ChatError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly status = 400,
    readonly extra: ErrorExtra = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const badRequest = (message: string, extra: ErrorExtra = {}) =>
  new ChatError(ErrorCode.BAD_REQUEST, message, 400, extra);

export const notAdmin = () =>
  new ChatError(ErrorCode.UNAUTHORIZED_PRINCIPAL, 'Must be an organization administrator', 400);
