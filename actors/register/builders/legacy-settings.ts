import { settingValue, type UserSettings } from '../../user/settings.ts';
import { userSettingsView } from '../../user/views.ts';
import type { WireRegisterKeys } from '../../wire/events.ts';
import type { Builder } from '../builder.ts';

/**
 * The settings older clients read at the top level of the registration, as the original's frozen lists
 * (`display_settings_legacy`, `notification_settings_legacy`); settings newer than those lists are only in
 * `user_settings`. Clients declaring `user_settings_object` read that instead and get none of these.
 */
const LEGACY_DISPLAY_SETTINGS = [
  'color_scheme', 'default_language', 'demote_inactive_streams', 'emojiset', 'enable_drafts_synchronization', 'enter_sends',
  'fluid_layout_width', 'high_contrast_mode', 'left_side_userlist', 'starred_message_counts', 'timezone', 'translate_emoticons',
  'twenty_four_hour_time', 'web_home_view',
] as const;
const LEGACY_NOTIFICATION_SETTINGS = [
  'enable_desktop_notifications', 'enable_digest_emails', 'enable_login_emails', 'enable_marketing_emails',
  'email_notifications_batching_period_seconds', 'enable_offline_email_notifications', 'enable_offline_push_notifications',
  'enable_online_push_notifications', 'enable_sounds', 'enable_stream_desktop_notifications', 'enable_stream_email_notifications',
  'enable_stream_push_notifications', 'enable_stream_audible_notifications', 'wildcard_mentions_notify',
  'message_content_in_email_notifications', 'notification_sound', 'pm_content_in_desktop_notifications', 'desktop_icon_count_display',
  'realm_name_in_email_notifications_policy', 'presence_enabled',
] as const;
// The lists' settings, by the table's names: the casts below only name the keys the lists give.
type LegacyDisplaySetting = (typeof LEGACY_DISPLAY_SETTINGS)[number];
type LegacyNotificationSetting = (typeof LEGACY_NOTIFICATION_SETTINGS)[number];

const modern = (capabilities: Readonly<Record<string, boolean>> | undefined) => capabilities?.user_settings_object === true;

/** fetch type `update_display_settings` */
export const legacyDisplaySettingsState: Builder = ({ personal }, { capabilities }) => {
  if (modern(capabilities)) return {};
  const view = userSettingsView(personal);
  return {
    ...(Object.fromEntries(LEGACY_DISPLAY_SETTINGS.map((name) => [name, settingValue(personal.settings, name)])) as Pick<UserSettings, LegacyDisplaySetting>),
    emojiset_choices: view.emojiset_choices,
  } satisfies WireRegisterKeys<LegacyDisplaySetting | 'emojiset_choices'>;
};

/** fetch type `update_global_notifications` */
export const legacyNotificationSettingsState: Builder = ({ personal }, { capabilities }) => {
  if (modern(capabilities)) return {};
  return {
    ...(Object.fromEntries(LEGACY_NOTIFICATION_SETTINGS.map((name) => [name, settingValue(personal.settings, name)])) as Pick<UserSettings, LegacyNotificationSetting>),
    available_notification_sounds: userSettingsView(personal).available_notification_sounds,
  } satisfies WireRegisterKeys<LegacyNotificationSetting | 'available_notification_sounds'>;
};
