import { SETTINGS, type UserSettingName } from '../../user/settings.ts';

/**
 * The settings an administrator may set for new users (PATCH /realm/user_settings_defaults): the personal
 * preferences, not what is naturally different per person (time zone, language) nor consent to email
 * (marketing and login emails, private data export), which each user gives for themselves.
 */
const NOT_DEFAULTABLE = new Set(['timezone', 'default_language', 'enable_marketing_emails', 'enable_login_emails', 'allow_private_data_export']);

export const DEFAULTABLE_SETTINGS: readonly string[] = SETTINGS.map((spec) => spec.name).filter((name) => !NOT_DEFAULTABLE.has(name));

export type ShownSettingName = Exclude<UserSettingName, 'timezone'>;

/** The settings the registration's `realm_user_settings_defaults` shows: every one but the time zone. */
export const SHOWN_SETTINGS: readonly ShownSettingName[] = SETTINGS.map((spec) => spec.name).filter((name): name is ShownSettingName => name !== 'timezone');
