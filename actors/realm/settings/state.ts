/**
 * The realm settings the rest of the server obeys (PATCH /realm), by their API names. The defaults are the
 * original server's; a realm snapshot written before a setting existed loads with its default.
 */
export const TOPICS_POLICIES = ['allow_empty_topic', 'disable_empty_topic'] as const;
export type TopicsPolicy = (typeof TOPICS_POLICIES)[number];
/** What users see of a message's edit history: everything, only its moves, or nothing. */
export const EDIT_HISTORY_POLICIES = ['all', 'moves', 'none'] as const;
export type EditHistoryPolicy = (typeof EDIT_HISTORY_POLICIES)[number];
/** The video call providers this server offers (the original's ids): none, and links to a Jitsi Meet server. */
export const VIDEO_CHAT_PROVIDERS = { disabled: { name: 'None', id: 0 }, jitsi_meet: { name: 'Jitsi Meet', id: 1 } } as const;
/** The original's GIF content ratings, by id (0: the GIF picker is off). */
export const GIF_RATINGS = {
  disabled: { name: 'GIPHY integration disabled', id: 0 },
  y: { name: 'Allow GIFs rated Y (Very young audience)', id: 1 },
  g: { name: 'Allow GIFs rated G (General audience)', id: 2 },
  pg: { name: 'Allow GIFs rated PG (Parental guidance)', id: 3 },
  'pg-13': { name: 'Allow GIFs rated PG-13 (Parental guidance - under 13)', id: 4 },
  r: { name: 'Allow GIFs rated R (Restricted)', id: 5 },
} as const;
/** The original's organization types (0: unspecified). */
export const ORG_TYPES: readonly number[] = [0, 10, 20, 30, 35, 40, 50, 60, 70, 80, 90, 100];
/** The original's limit on the custom text of the welcome bot's message. */
export const MAX_WELCOME_MESSAGE_LENGTH = 8000;

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
  message_edit_history_visibility_policy: EditHistoryPolicy;
  /** null: no limit */
  message_content_delete_limit_seconds: number | null;
  /** days before a new member is a full member */
  waiting_period_threshold: number;
  digest_emails_enabled: boolean;
  /** 0 is Monday */
  digest_weekday: number;
  disallow_disposable_email_addresses: boolean;
  email_changes_disabled: boolean;
  name_changes_disabled: boolean;
  invite_required: boolean;
  inline_image_preview: boolean;
  inline_url_embed_preview: boolean;
  require_unique_names: boolean;
  emails_restricted_to_domains: boolean;
  send_welcome_emails: boolean;
  message_content_allowed_in_email_notifications: boolean;
  want_advertise_in_communities_directory: boolean;
  enable_read_receipts: boolean;
  enable_guest_user_dm_warning: boolean;
  enable_guest_user_indicator: boolean;
  require_e2ee_push_notifications: boolean;
  /** a VIDEO_CHAT_PROVIDERS id */
  video_chat_provider: number;
  /** the realm's own Jitsi server; null: the server's */
  jitsi_server_url: string | null;
  /** a GIF_RATINGS id */
  giphy_rating: number;
  /** an ORG_TYPES value */
  org_type: number;
  default_code_block_language: string;
  welcome_message_custom_text: string;
  /** the channel where reports of messages go; -1: none */
  moderation_request_channel_id: number;
  /** the channel of the server's own update announcements; -1: none */
  zulip_update_announcements_stream_id: number;
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
  message_edit_history_visibility_policy: 'all',
  message_content_delete_limit_seconds: null,
  waiting_period_threshold: 0,
  digest_emails_enabled: false,
  digest_weekday: 1,
  disallow_disposable_email_addresses: true,
  email_changes_disabled: false,
  name_changes_disabled: false,
  invite_required: true,
  inline_image_preview: true,
  inline_url_embed_preview: false,
  require_unique_names: false,
  emails_restricted_to_domains: false,
  send_welcome_emails: true,
  message_content_allowed_in_email_notifications: true,
  want_advertise_in_communities_directory: false,
  enable_read_receipts: false,
  enable_guest_user_dm_warning: true,
  enable_guest_user_indicator: true,
  require_e2ee_push_notifications: false,
  video_chat_provider: VIDEO_CHAT_PROVIDERS.jitsi_meet.id,
  jitsi_server_url: null,
  giphy_rating: GIF_RATINGS.g.id,
  org_type: 0,
  default_code_block_language: '',
  welcome_message_custom_text: '',
  moderation_request_channel_id: -1,
  zulip_update_announcements_stream_id: -1,
};

/** The settings that name a channel the notification bot posts to. */
export const ANNOUNCEMENT_SETTINGS = ['new_stream_announcements_stream_id', 'signup_announcements_stream_id', 'moderation_request_channel_id'] as const;

export const REALM_SETTING_NAMES = Object.keys(DEFAULT_REALM_SETTINGS) as RealmSettingName[];

/** Settings only an organization owner may change (the rest: administrators). */
export const OWNER_ONLY_SETTINGS: ReadonlySet<string> = new Set(['message_retention_days', 'can_create_groups', 'can_manage_all_groups']);

export const topicsRequired = (settings: RealmSettings) => settings.topics_policy === 'disable_empty_topic';
