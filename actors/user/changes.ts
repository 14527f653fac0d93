import type { SettingValue } from './settings.ts';
import type { Draft, NavigationView, PendingEmailChange, PushDevice, PushToken, VideoToken, SavedSnippet, ScheduledMessage, UserStatus, VisibilityPolicy } from './state.ts';

/** Facts about one user's personal state, every server-chosen value filled in; `applyUserChange` is the only reader. */
export type UserChange =
  | { type: 'snippet.created'; snippet: SavedSnippet }
  | { type: 'snippet.edited'; id: number; title?: string; content?: string }
  | { type: 'snippet.deleted'; id: number }
  | { type: 'draft.created'; drafts: Draft[] }
  | { type: 'draft.edited'; draft: Draft }
  | { type: 'draft.deleted'; id: number }
  /** sync was turned off: the stored drafts go, with no event (clients keep their local copies) */
  | { type: 'drafts.cleared' }
  | { type: 'scheduled.created'; message: ScheduledMessage }
  /** the whole message after the edit, `failed` cleared */
  | { type: 'scheduled.edited'; message: ScheduledMessage }
  | { type: 'scheduled.deleted'; id: number; reminder?: true }
  /**
   * Sent: never logged as a user change, but applied by the realm's `message.sent` that carries the
   * scheduled message's id (see ActorRegistry.applyToUserActors), so that the send and the removal are one record.
   */
  | { type: 'scheduled.delivered'; id: number; reminder?: true }
  | { type: 'scheduled.failed'; id: number; reason: string }
  | { type: 'setting.changed'; name: string; value: SettingValue }
  | { type: 'email.change_requested'; pending: PendingEmailChange }
  | { type: 'email.change_confirmed' }
  | { type: 'push_token.added'; token: PushToken }
  | { type: 'push_token.removed'; token: string }
  /** the whole list after the change, as the event announces it */
  | { type: 'alert_words.changed'; words: string[] }
  /** only the fields that were sent; `away` is announced here but stored as `presence_enabled` */
  | { type: 'status.changed'; away?: boolean; status: Partial<UserStatus> }
  | { type: 'user.muted'; mutedUserId: number; at: number }
  | { type: 'user.unmuted'; mutedUserId: number }
  /** policy 0 removes the topic's entry; `at` is UNIX seconds */
  | { type: 'user_topic.changed'; streamId: number; topicName: string; policy: VisibilityPolicy; at: number }
  | { type: 'navigation_view.added'; view: NavigationView }
  /** only the fields that were sent */
  | { type: 'navigation_view.updated'; fragment: string; isPinned?: boolean; name?: string }
  | { type: 'navigation_view.removed'; fragment: string }
  | { type: 'onboarding_step.seen'; name: string }
  /** a registration for end-to-end encrypted push, new or with the push service's answer */
  | { type: 'push_device.changed'; device: PushDevice }
  /** the user connected (a token) or lost (null) the video call service's OAuth token */
  | { type: 'video_token.changed'; token: VideoToken | null };
