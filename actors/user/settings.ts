import { badRequest } from '../errors.ts';
import type { WireSchema } from '../wire/events.ts';
import { EMOJISET_CHOICES, isTimeZone, LANGUAGES, NOTIFICATION_SOUND_VALUES } from './setting-values.ts';

export type SettingValue = boolean | number | string;

type WireUserSettings = Omit<WireSchema<'register_queue_200_response_allOf_user_settings'>, 'available_notification_sounds' | 'emojiset_choices'>;
/**
 * Every setting with its value, as the registration's `user_settings` types them (less its read-only choices).
 * None is null here: the document's `twenty_four_hour_time` may be (the original's "automatic"), which this
 * server does not offer, and its legacy top-level copy may not.
 */
export type UserSettings = { [K in keyof WireUserSettings]: NonNullable<WireUserSettings[K]> };
export type UserSettingName = keyof UserSettings;
/** The settings whose value is a `T`. */
type NamesOf<T> = { [K in UserSettingName]: UserSettings[K] extends T ? K : never }[UserSettingName];

/**
 * One user setting: its wire type, the values it accepts and its default (the original server's default for
 * a new user). Validation (PATCH /settings) and the registration state (`user_settings`) both read this table.
 */
export interface SettingSpec<N extends UserSettingName = UserSettingName> {
  name: N;
  kind: 'bool' | 'int' | 'string';
  default: SettingValue;
  /** the accepted values; absent: any value of the kind within `min`/`max` or passing `test` */
  values?: readonly SettingValue[];
  min?: number;
  max?: number;
  test?: (value: string) => boolean;
}

// Each maker takes only the names of `user_settings` whose value is of its kind.
const bool = <N extends NamesOf<boolean>>(name: N, fallback: boolean): SettingSpec<N> => ({ name, kind: 'bool', default: fallback });
const oneOf = <N extends NamesOf<number>>(name: N, values: readonly number[], fallback: number): SettingSpec<N> => ({ name, kind: 'int', values, default: fallback });
const between = <N extends NamesOf<number>>(name: N, min: number, max: number, fallback: number): SettingSpec<N> => ({ name, kind: 'int', min, max, default: fallback });
const choice = <N extends NamesOf<string>>(name: N, values: readonly string[], fallback: string): SettingSpec<N> => ({ name, kind: 'string', values, default: fallback });
const tested = <N extends NamesOf<string>>(name: N, test: (value: string) => boolean, fallback: string): SettingSpec<N> => ({ name, kind: 'string', test, default: fallback });

// The original stores font size and line height as positive small integers (at most 32767).
const SMALL_INT_MAX = 32_767;
// The original caps the email batching period at one week.
const WEEK_SECONDS = 7 * 24 * 60 * 60;
const ONE_TO_THREE = [1, 2, 3] as const;
const ONE_TO_FOUR = [1, 2, 3, 4] as const;

/** Every setting of the spec's User settings table, in its order. */
const TABLE = [
  bool('twenty_four_hour_time', false),
  oneOf('web_mark_read_on_scroll_policy', ONE_TO_THREE, 1),
  oneOf('web_channel_default_view', [1, 2], 1),
  bool('starred_message_counts', true),
  bool('receives_typing_notifications', true),
  bool('web_suggest_update_timezone', true),
  bool('fluid_layout_width', false),
  bool('high_contrast_mode', false),
  between('web_font_size_px', 1, SMALL_INT_MAX, 16),
  between('web_line_height_percent', 1, SMALL_INT_MAX, 140),
  oneOf('color_scheme', ONE_TO_THREE, 1),
  bool('enable_drafts_synchronization', true),
  bool('translate_emoticons', false),
  bool('display_emoji_reaction_users', true),
  choice('default_language', [...LANGUAGES.keys()], 'en'),
  choice('web_home_view', ['recent_topics', 'inbox', 'all_messages'], 'inbox'),
  bool('web_escape_navigates_to_home_view', true),
  bool('left_side_userlist', false),
  choice('emojiset', EMOJISET_CHOICES.map((set) => set.key), 'google'),
  oneOf('demote_inactive_streams', ONE_TO_THREE, 1),
  oneOf('user_list_style', ONE_TO_THREE, 3),
  choice('web_animate_image_previews', ['always', 'on_hover', 'never'], 'on_hover'),
  oneOf('web_stream_unreads_count_display_policy', ONE_TO_THREE, 2),
  bool('hide_ai_features', false),
  tested('timezone', isTimeZone, ''),
  bool('enter_sends', false),
  bool('enable_stream_desktop_notifications', false),
  bool('enable_stream_email_notifications', false),
  bool('enable_stream_push_notifications', false),
  bool('enable_stream_audible_notifications', false),
  choice('notification_sound', NOTIFICATION_SOUND_VALUES, 'zulip'),
  bool('enable_desktop_notifications', true),
  bool('enable_sounds', true),
  bool('enable_followed_topic_desktop_notifications', true),
  bool('enable_followed_topic_email_notifications', true),
  bool('enable_followed_topic_push_notifications', true),
  bool('enable_followed_topic_audible_notifications', true),
  between('email_notifications_batching_period_seconds', 1, WEEK_SECONDS, 120),
  bool('enable_offline_email_notifications', true),
  bool('enable_offline_push_notifications', true),
  bool('enable_online_push_notifications', true),
  bool('enable_digest_emails', true),
  bool('enable_marketing_emails', true),
  bool('enable_login_emails', true),
  bool('message_content_in_email_notifications', true),
  bool('pm_content_in_desktop_notifications', true),
  bool('wildcard_mentions_notify', true),
  bool('enable_followed_topic_wildcard_mentions_notify', true),
  oneOf('desktop_icon_count_display', ONE_TO_FOUR, 1),
  oneOf('realm_name_in_email_notifications_policy', ONE_TO_THREE, 1),
  oneOf('automatically_follow_topics_policy', ONE_TO_FOUR, 3),
  oneOf('automatically_unmute_topics_in_muted_streams_policy', ONE_TO_FOUR, 2),
  bool('automatically_follow_topics_where_mentioned', true),
  bool('presence_enabled', true),
  bool('send_private_typing_notifications', true),
  bool('send_stream_typing_notifications', true),
  bool('send_read_receipts', true),
  bool('allow_private_data_export', false),
  oneOf('email_address_visibility', [1, 2, 3, 4, 5], 1),
  bool('web_navigate_to_sent_message', true),
  bool('web_left_sidebar_show_channel_folders', true),
  bool('web_left_sidebar_unreads_count_summary', true),
  // This server posts no resolved-topic notices yet; the choice is kept for the clients that show it.
  choice('resolved_topic_notice_auto_read_policy', ['always', 'except_followed', 'never'], 'except_followed'),
];
/** A setting of `user_settings` the table leaves out is a compile error here (its name is shown). */
const complete: [Exclude<UserSettingName, (typeof TABLE)[number]['name']>] extends [never] ? true : Exclude<UserSettingName, (typeof TABLE)[number]['name']> = true;
void complete;

export const SETTINGS: readonly SettingSpec[] = TABLE;

export const SETTING_BY_NAME: ReadonlyMap<string, SettingSpec> = new Map(SETTINGS.map((spec) => [spec.name, spec]));

/** A user's settings as stored: only the ones the user changed; the rest read as the table's defaults. */
export type SettingOverrides = Record<string, SettingValue>;

export function settingValue(overrides: SettingOverrides, name: string): SettingValue {
  const spec = SETTING_BY_NAME.get(name);
  if (!spec) throw new Error(`unknown setting ${name}`);
  return Object.hasOwn(overrides, name) ? overrides[name]! : spec.default;
}

/** Every setting with its current value, in the table's order (checkSetting keeps each value to its kind). */
export function allSettings(overrides: SettingOverrides): UserSettings {
  return Object.fromEntries(SETTINGS.map((spec) => [spec.name, Object.hasOwn(overrides, spec.name) ? overrides[spec.name]! : spec.default])) as UserSettings;
}

/** Checks one requested value against the table; throws BAD_REQUEST naming the setting. */
export function checkSetting(name: string, value: unknown): SettingValue {
  const spec = SETTING_BY_NAME.get(name);
  if (!spec) throw badRequest(`Unknown setting '${name}'`);
  const typed =
    (spec.kind === 'bool' && typeof value === 'boolean') ||
    (spec.kind === 'int' && Number.isSafeInteger(value)) ||
    (spec.kind === 'string' && typeof value === 'string');
  if (!typed) throw badRequest(`Invalid ${name}`);
  const v = value as SettingValue;
  if (spec.values && !spec.values.includes(v)) {
    throw badRequest(spec.kind === 'string' ? `Invalid ${name} '${String(v)}'` : `Invalid ${name}`);
  }
  if (spec.min !== undefined && spec.max !== undefined && ((v as number) < spec.min || (v as number) > spec.max)) {
    throw badRequest(`Invalid ${name}: ${String(v)} is not between ${spec.min} and ${spec.max}`);
  }
  if (spec.test && !spec.test(v as string)) throw badRequest(`Invalid ${name} '${String(v)}'`);
  return v;
}

/** Checks every requested setting (in the table's order, so the first error is predictable). */
export function checkSettings(requested: Record<string, unknown>): Record<string, SettingValue> {
  const checked: Record<string, SettingValue> = {};
  for (const spec of SETTINGS) {
    if (Object.hasOwn(requested, spec.name)) checked[spec.name] = checkSetting(spec.name, requested[spec.name]);
  }
  for (const name of Object.keys(requested)) if (!SETTING_BY_NAME.has(name)) checkSetting(name, requested[name]);
  return checked;
}
