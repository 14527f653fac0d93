import type { SettingOverrides } from './settings.ts';
import type { ReactionType } from '../realm/messages/state.ts';

export interface SavedSnippet {
  id: number;
  title: string;
  content: string;
  /** UNIX seconds */
  dateCreated: number;
}

export type DraftType = '' | 'stream' | 'private';

/** A draft as stored: already normalized (see decide-drafts.ts), so views return it as it is. */
export interface Draft {
  id: number;
  type: DraftType;
  /** a channel: its one ID; direct: the other participants' IDs, sorted; unaddressed: empty */
  to: number[];
  topic: string;
  content: string;
  /** UNIX seconds of the last edit */
  timestamp: number;
}

/** A message waiting to be sent at `deliverAt`; its fields are already normalized by a dry run of the send. */
export interface ScheduledMessage {
  id: number;
  type: 'stream' | 'private';
  /** a channel: its one ID; direct: the other participants' IDs, sorted (the own ID for a note to self) */
  to: number[];
  /** channel messages only; '' for direct messages */
  topic: string;
  content: string;
  renderedContent: string;
  /** UNIX seconds: the absolute deadline the runtime's timer service delivers at */
  deliverAt: number;
  /** as POST /messages takes it; undefined leaves the choice to the send */
  readBySender?: boolean;
  /** the client that scheduled it, the sent message's `client` as in the original; entries stored before it was kept send as 'API' */
  client?: string;
  /** the server tried to send it and could not; it waits for an edit with a new time */
  failed: boolean;
  /**
   * A reminder (POST /reminders): the message it is about. The notification bot sends it to its owner, in
   * the owner's direct messages with the bot; the scheduled-message API neither lists nor edits it.
   */
  reminderTargetMessageId?: number;
}

/** The pending (and failed) reminders, or the other scheduled messages, among `messages`: each kind has its own bound. */
export function countScheduled(messages: Iterable<ScheduledMessage>, reminders: boolean): number {
  let count = 0;
  for (const message of messages) if ((message.reminderTargetMessageId !== undefined) === reminders) count++;
  return count;
}

export interface PushToken {
  token: string;
  /** an APNs token's app; null for an FCM registration token, which names none */
  appid: string | null;
  /** UNIX seconds */
  dateCreated: number;
}

/** The status a user set; empty strings mean unset. `away` is not here: it reads `presence_enabled`. */
export interface UserStatus {
  statusText: string;
  emojiName: string;
  emojiCode: string;
  reactionType: ReactionType | '';
}

/** Topic visibility policies of the API: 0 is none (no entry is kept), then muted, unmuted, followed. */
export const VisibilityPolicy = { none: 0, muted: 1, unmuted: 2, followed: 3 } as const;
export type VisibilityPolicy = (typeof VisibilityPolicy)[keyof typeof VisibilityPolicy];

/** A user's policy for one topic of one channel; topics need not have messages. */
export interface UserTopic {
  streamId: number;
  /** the spelling of the latest change (topics compare without regard to case) */
  topicName: string;
  /** UNIX seconds */
  lastUpdated: number;
  visibilityPolicy: Exclude<VisibilityPolicy, 0>;
}

/** Topic names compare without regard to case, as in the original. */
export const userTopicKey = (streamId: number, topicName: string) => `${streamId}\0${topicName.toLowerCase()}`;

/** An email change waiting for its confirmation link to be followed. */
export interface PendingEmailChange {
  newEmail: string;
  token: string;
  /** UNIX seconds */
  requestedAt: number;
}

/** A saved left-sidebar view: a built-in one pinned or hidden, or the user's own, named. */
export interface NavigationView {
  /** the web app's URL hash of the view; unique per user */
  fragment: string;
  isPinned: boolean;
  /** null for a built-in view */
  name: string | null;
}

/** A user's personal state, owned by that user's actor and mutated in place by `applyUserChange`. */
export interface UserState {
  realmId: number;
  userId: number;
  snippets: Map<number, SavedSnippet>;
  nextSnippetId: number;
  drafts: Map<number, Draft>;
  nextDraftId: number;
  /** pending and failed ones; a delivered message leaves the map */
  scheduled: Map<number, ScheduledMessage>;
  nextScheduledId: number;
  settings: SettingOverrides;
  pendingEmailChange: PendingEmailChange | null;
  pushTokens: Map<string, PushToken>;
  /** in the order they were added; unique without regard to case */
  alertWords: string[];
  status: UserStatus;
  /** muted user ID -> UNIX seconds when muted */
  mutedUsers: Map<number, number>;
  /** userTopicKey -> policy, in the order they were first set */
  userTopics: Map<string, UserTopic>;
  /** in the order they were added; replaced whole by every change (plain data, stored as it is) */
  navigationViews: readonly NavigationView[];
  /** the one-time notices the user has seen (onboarding.ts); replaced whole by every change */
  onboardingStepsSeen: readonly string[];
  /** devices registered for end-to-end encrypted push (push-e2ee.ts); replaced whole by every change */
  pushDevices: readonly PushDevice[];
  /** the user's OAuth token of the video call service (src/routes/video-calls-oauth.ts), null without one */
  videoToken: VideoToken | null;
}

/** A device registered for end-to-end encrypted push notifications (POST /mobile_push/register). */
export interface PushDevice {
  pushAccountId: number;
  tokenKind: 'fcm' | 'apns';
  /** the client's NaCl public key, base64: what its notifications are encrypted to */
  pushPublicKey: string;
  status: 'pending' | 'active' | 'failed';
  /** why the push service refused it, when it did */
  errorCode: string | null;
}

/** A user's OAuth token with the video call service (Zoom's user OAuth integration). A credential. */
export interface VideoToken {
  accessToken: string;
  refreshToken: string | null;
  /** UNIX milliseconds, null if the service gave no lifetime */
  expiresAt: number | null;
}

/**
 * What a user snapshot stores: maps as arrays. The collections added after the first format are optional,
 * so an older snapshot loads with them empty.
 */
export type UserRecord = Omit<UserState, 'snippets' | 'drafts' | 'scheduled' | 'nextScheduledId' | 'pushTokens' | 'mutedUsers' | 'userTopics' | 'pushDevices' | 'videoToken'> & {
  snippets: SavedSnippet[];
  drafts?: Draft[];
  scheduled?: ScheduledMessage[];
  nextScheduledId?: number;
  pushTokens?: PushToken[];
  mutedUsers?: [number, number][];
  userTopics?: UserTopic[];
  navigationViews?: readonly NavigationView[];
  onboardingStepsSeen?: readonly string[];
  /** absent in snapshots written before end-to-end encrypted push */
  pushDevices?: readonly PushDevice[];
  /** absent in snapshots written before video call tokens */
  videoToken?: VideoToken | null;
};

export const emptyStatus = (): UserStatus => ({ statusText: '', emojiName: '', emojiCode: '', reactionType: '' });

/** A new user's state; `settings` are the realm's defaults for new users when the account was made. */
export function emptyUserState(realmId: number, userId: number, settings: SettingOverrides = {}): UserState {
  return {
    realmId,
    userId,
    snippets: new Map(),
    nextSnippetId: 1,
    drafts: new Map(),
    nextDraftId: 1,
    scheduled: new Map(),
    nextScheduledId: 1,
    settings: { ...settings },
    pendingEmailChange: null,
    pushTokens: new Map(),
    alertWords: [],
    status: emptyStatus(),
    mutedUsers: new Map(),
    userTopics: new Map(),
    navigationViews: [],
    onboardingStepsSeen: [],
    pushDevices: [],
    videoToken: null,
  };
}

export function userToRecord(state: UserState): UserRecord {
  return {
    ...state,
    snippets: [...state.snippets.values()],
    drafts: [...state.drafts.values()],
    scheduled: [...state.scheduled.values()],
    pushTokens: [...state.pushTokens.values()],
    mutedUsers: [...state.mutedUsers],
    userTopics: [...state.userTopics.values()],
  };
}

export function userFromRecord(record: UserRecord): UserState {
  return {
    ...emptyUserState(record.realmId, record.userId),
    ...record,
    snippets: new Map(record.snippets.map((s) => [s.id, s])),
    drafts: new Map((record.drafts ?? []).map((d) => [d.id, d])),
    scheduled: new Map((record.scheduled ?? []).map((m) => [m.id, m])),
    nextScheduledId: record.nextScheduledId ?? 1,
    pushTokens: new Map((record.pushTokens ?? []).map((p) => [p.token, p])),
    mutedUsers: new Map(record.mutedUsers ?? []),
    userTopics: new Map((record.userTopics ?? []).map((topic) => [userTopicKey(topic.streamId, topic.topicName), topic])),
  };
}
