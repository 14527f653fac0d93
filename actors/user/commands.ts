import type { RealmState } from '../realm/state.ts';
import type { PushDeviceInput } from './push-e2ee.ts';
import type { VideoToken } from './state.ts';
import type { DraftType, ScheduledMessage, VisibilityPolicy } from './state.ts';

/** A draft as a client sends it (POST /drafts, PATCH /drafts/{id}); decide normalizes it. */
export interface DraftInput {
  type: DraftType;
  to: number[];
  topic: string;
  content: string;
  /** UNIX seconds, possibly fractional; the server fills it in when absent */
  timestamp?: number;
}

/** What POST /users/me/status asks to change; absent fields stay as they are. */
export interface StatusInput {
  away?: boolean;
  statusText?: string;
  emojiName?: string;
  emojiCode?: string;
  reactionType?: string;
}

/** A scheduled message as stored, less what the actor assigns (the id, the failed state). */
export type ScheduledInput = Omit<ScheduledMessage, 'id' | 'failed'>;

/**
 * A scheduled message as the client asks for it: recipients as ids (a channel's, or users'), the topic and
 * content as sent. The actor checks it with a dry run of the realm's send, which normalizes them.
 */
export interface ScheduledRequest {
  type: ScheduledMessage['type'];
  to: number[];
  topic?: string;
  content: string;
  deliverAt: number;
  readBySender?: boolean;
  client?: string;
}

/** PATCH /scheduled_messages/{id}: what the client sent; the rest is kept. `to` is read by the kind after the edit. */
export type ScheduledEdit = Partial<Omit<ScheduledRequest, 'readBySender' | 'client'>>;

/**
 * The realm a command's rules read: who may be muted, which channels a topic policy may name, the send a
 * scheduled message will make. Read, never changed; the user's decision runs before the runtime's first
 * await, so these are the facts of the moment the command is decided.
 */
export interface RealmFacts {
  realm: RealmState;
}

/** Commands a user sends to its own actor. */
export type UserCommand =
  | { type: 'snippet.create'; title: string; content: string }
  | { type: 'snippet.edit'; id: number; title?: string; content?: string }
  | { type: 'snippet.delete'; id: number }
  | ({ type: 'draft.create'; drafts: DraftInput[] } & RealmFacts)
  | ({ type: 'draft.edit'; id: number; draft: DraftInput } & RealmFacts)
  | { type: 'draft.delete'; id: number }
  | ({ type: 'scheduled.create'; message: ScheduledRequest } & RealmFacts)
  /** a failed message needs a new time */
  | ({ type: 'scheduled.edit'; id: number; edit: ScheduledEdit } & RealmFacts)
  | { type: 'scheduled.delete'; id: number }
  /** the timer service could not send it: the realm refused the send with `reason` */
  | { type: 'scheduled.fail'; id: number; reason: string }
  | { type: 'settings.update'; settings: Record<string, unknown> }
  | ({ type: 'email.request_change'; newEmail: string } & RealmFacts)
  /** the link was followed and the realm has changed the address: the pending change is done */
  | { type: 'email.confirm_change'; token: string }
  /** `appid` given: an APNs token (hex); absent: an FCM registration token */
  | { type: 'push_token.add'; token: string; appid: string | null }
  | { type: 'push_token.remove'; token: string }
  | { type: 'alert_words.add'; words: string[] }
  | { type: 'alert_words.remove'; words: string[] }
  /** `by`: another user setting this one's status, which only its administrator may (POST /users/{id}/status) */
  | { type: 'status.update'; status: StatusInput; by?: { userId: number } & RealmFacts }
  | ({ type: 'user.mute'; mutedUserId: number } & RealmFacts)
  | ({ type: 'user.unmute'; mutedUserId: number } & RealmFacts)
  /**
   * the topic is as the client sent it; `channel`: the id, or the name of the deprecated muted-topics form;
   * `error`: the answer when that names no channel the user may use (each form words it its own way)
   */
  | ({ type: 'user_topic.set'; channel: number | { name: string }; topic: string; policy: VisibilityPolicy; error: string } & RealmFacts)
  /** `maxViews`: the server's bound (config) */
  | { type: 'navigation_view.add'; fragment: string; isPinned: boolean; name?: string; maxViews: number }
  | { type: 'navigation_view.update'; fragment: string; isPinned?: boolean; name?: string }
  | { type: 'navigation_view.remove'; fragment: string }
  | { type: 'onboarding_step.mark_seen'; name: string }
  /** the realm wrote the reminder's text (realm/notifications/reminders.ts); `maxReminders`: the server's bound */
  | { type: 'reminder.create'; message: ScheduledInput & { reminderTargetMessageId: number }; maxReminders: number }
  | { type: 'reminder.delete'; id: number }
  | ({ type: 'push_device.register' } & PushDeviceInput)
  | { type: 'push_device.set_status'; pushAccountId: number; pushPublicKey: string; status: 'active' | 'failed'; errorCode: string | null }
  | { type: 'video_token.set'; token: VideoToken | null };
