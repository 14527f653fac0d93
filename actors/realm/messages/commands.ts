import type { Caller } from '../commands.ts';
import type { ReactionType } from './state.ts';

export type PropagateMode = 'change_one' | 'change_later' | 'change_all';

/** Reactions are named by emoji name, and optionally by code and type (the code is then authoritative). */
export interface ReactionSpec {
  emojiName: string;
  emojiCode?: string;
  reactionType?: ReactionType;
}

export type MessageCommand =
  | {
      type: 'message.send';
      caller: Caller;
      kind: 'channel' | 'direct';
      /** a channel id or name; for direct messages user ids or emails */
      to: number | string | (number | string)[];
      topic?: string;
      content: string;
      client: string;
      /** undefined: read for the sender (see decide-send.ts) */
      readBySender?: boolean;
      /** local echo: the sender's queue that should see `local_message_id` */
      localEcho?: { queueId: string; localId: string };
      /** the sender's scheduled message this send delivers (the timer service) */
      scheduledMessageId?: number;
    }
  | {
      type: 'message.edit';
      caller: Caller;
      messageId: number;
      content?: string;
      topic?: string;
      channelId?: number;
      propagateMode: PropagateMode;
      /** the notification bot tells the old / new thread of a move (defaults: false / true) */
      notifyOldThread?: boolean;
      notifyNewThread?: boolean;
      /** the domain of the notification bot's email, should a notice need to bring the bot into being */
      botDomain?: string;
      /** SHA-256 (hex) of the content the client edited; another current content refuses the edit */
      prevContentSha256?: string;
    }
  | { type: 'message.delete'; caller: Caller; messageId: number }
  /** deletes the newest `limit` messages of a topic (POST /streams/{id}/delete_topic runs it in batches) */
  | { type: 'topic.delete'; caller: Caller; channelId: number; topic: string; limit: number }
  | { type: 'reaction.add' | 'reaction.remove'; caller: Caller; messageId: number; reaction: ReactionSpec }
  | { type: 'message.flags'; caller: Caller; messageIds: number[]; op: 'add' | 'remove'; flag: string }
  /**
   * marks the caller's unread messages read: all, a channel's (one the caller is subscribed to) or a topic's;
   * with `limit`, only the newest `limit` of them, and with `before`, only those below it, where the last batch
   * stopped (POST /mark_*_as_read run it in batches)
   */
  | { type: 'message.mark_read'; caller: Caller; scope: MarkReadScope; limit?: number; before?: number };

/** `topic`: as the client sent it (normalized by the decision) */
export type MarkReadScope = { kind: 'all' } | { kind: 'channel'; channelId: number } | { kind: 'topic'; channelId: number; topic: string };
