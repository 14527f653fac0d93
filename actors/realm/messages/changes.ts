import type { PropagateMode } from './commands.ts';
import type { Mentions, Reaction, SentMessage } from './state.ts';
import type { Submessage } from '../submessages/state.ts';

/** The flags a user may change, as the API names them (`read` is stored as its inverse, unread). */
export type EditableFlag = 'read' | 'starred' | 'collapsed';

/** A channel whose oldest message changes: the `stream` update event for `first_message_id`. */
export type FirstMessageIds = [channelId: number, firstMessageId: number | null][];

/** The messages of one conversation that a deletion removed, and who is told (computed before they go). */
export interface DeletedGroup {
  messageType: 'stream' | 'private';
  channelId?: number;
  topic?: string;
  messageIds: number[];
  userIds: number[];
}

export interface ContentEdit {
  content: string;
  renderedContent: string;
  isMeMessage: boolean;
  mentions: Mentions;
  /** the uploaded files the new content links (attachments/decide.ts); absent: none */
  attachmentIds?: number[];
}

export interface MoveEdit {
  fromChannelId: number;
  fromTopic: string;
  toChannelId: number;
  toTopic: string;
  /** only the resolved-topic prefix changed: not a move for `last_moved_timestamp` */
  resolveOnly: boolean;
  /** channel moves: users who can no longer read the moved messages, and the new channel's subscribers */
  lostAccess: number[];
  gained: number[];
}

export type MessageChange =
  | {
      type: 'message.sent';
      message: SentMessage;
      readBySender: boolean;
      localEcho?: { queueId: string; localId: string };
      /**
       * The sender's scheduled message this delivers: applying the send also removes it from the sender's
       * actor, so the send and the removal are one log record and a crash can never send it twice.
       */
      scheduledMessageId?: number;
      /** a reminder: the user whose scheduled message it is (the sender is the notification bot) */
      scheduledOwnerId?: number;
      /** the widget the message makes (`/poll`, `/todo`): its first submessage, made with it */
      widget?: Submessage;
    }
  | {
      type: 'message.edited';
      editorId: number;
      /** UNIX seconds */
      at: number;
      targetId: number;
      /** sorted; the target and, for moves, every message moved with it */
      messageIds: number[];
      propagateMode: PropagateMode;
      content?: ContentEdit;
      move?: MoveEdit;
      firstMessageIds: FirstMessageIds;
      /** files the old content linked and the new one does not; of those, the editor's that nothing links now */
      unlinkedAttachmentIds?: number[];
      detachedAttachmentIds?: number[];
    }
  | { type: 'messages.deleted'; groups: DeletedGroup[]; firstMessageIds: FirstMessageIds }
  | { type: 'reaction.added' | 'reaction.removed'; messageId: number; reaction: Reaction }
  | { type: 'message.flags_changed'; userId: number; flag: EditableFlag; op: 'add' | 'remove'; messageIds: number[] };
