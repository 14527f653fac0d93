/**
 * The realm settings the rest of the server obeys (PATCH /realm), by their API names. The defaults are the
 * original server's; a realm snapshot written before a setting existed loads with its default.
 */
export const TOPICS_POLICIES = ['allow_empty_topic', 'disable_empty_topic'] as const;
export type TopicsPolicy = (typeof TOPICS_POLICIES)[number];

export interface RealmSettings {
  /** governs content edits only; moves have their own permissions */
  allow_message_editing: boolean;
  /** null: no limit */
  message_content_edit_limit_seconds: number | null;
  move_messages_within_stream_limit_seconds: number | null;
  move_messages_between_streams_limit_seconds: number | null;
  /** `disable_empty_topic` is what older clients know as `mandatory_topics` */
  topics_policy: TopicsPolicy;
  default_language: string;
  /** -1: keep messages forever (the original's encoding of `unlimited`) */
  message_retention_days: number;
  enable_spectator_access: boolean;
  /** the channel where the notification bot announces new channels; -1: none */
  new_stream_announcements_stream_id: number;
  /** the channel where the notification bot announces new users; -1: none */
  signup_announcements_stream_id: number;
  /** users other than administrators may not change their avatar */
  avatar_changes_disabled: boolean;
  enable_read_receipts: boolean;
  /** the channel where reports of messages go; -1: none */
  moderation_request_channel_id: number;
}

export type RealmSettingName = keyof RealmSettings;

export const DEFAULT_REALM_SETTINGS: Readonly<RealmSettings> = {
  allow_message_editing: true,
  // Ten minutes to fix a typo; a week to tidy topics up.
  message_content_edit_limit_seconds: 600,
  move_messages_within_stream_limit_seconds: 604_800,
  move_messages_between_streams_limit_seconds: 604_800,
  topics_policy: 'allow_empty_topic',
  default_language: 'en',
  message_retention_days: -1,
  enable_spectator_access: false,
  // The original defaults new-channel announcements to the realm's first default channel; here nothing is
  // announced until an administrator picks a channel, so a fresh realm's message history stays empty.
  new_stream_announcements_stream_id: -1,
  signup_announcements_stream_id: -1,
  avatar_changes_disabled: false,
  enable_read_receipts: false,
  moderation_request_channel_id: -1,
};

/** The settings that name a channel the notification bot posts to. */
export const ANNOUNCEMENT_SETTINGS = ['new_stream_announcements_stream_id', 'signup_announcements_stream_id', 'moderation_request_channel_id'] as const;

export const REALM_SETTING_NAMES = Object.keys(DEFAULT_REALM_SETTINGS) as RealmSettingName[];

/** Settings only an organization owner may change (the rest: administrators). */
export const OWNER_ONLY_SETTINGS: ReadonlySet<string> = new Set(['message_retention_days', 'can_create_groups', 'can_manage_all_groups']);

export const topicsRequired = (settings: RealmSettings) => settings.topics_policy === 'disable_empty_topic';
