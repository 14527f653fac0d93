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
};

export const REALM_SETTING_NAMES = Object.keys(DEFAULT_REALM_SETTINGS) as RealmSettingName[];

/** Settings only an organization owner may change (the rest: administrators). */
export const OWNER_ONLY_SETTINGS: ReadonlySet<string> = new Set(['message_retention_days', 'can_create_groups', 'can_manage_all_groups']);

export const topicsRequired = (settings: RealmSettings) => settings.topics_policy === 'disable_empty_topic';
