import { EMOJISET_CHOICES, NOTIFICATION_SOUNDS } from '../../user/setting-values.ts';
import { settingValue } from '../../user/settings.ts';
import type { WireSchema } from '../../wire/events.ts';
import type { RealmState } from '../state.ts';
import { SHOWN_SETTINGS, type ShownSettingName } from './state.ts';

/**
 * `realm_user_settings_defaults`: every default with its current value (SHOWN_SETTINGS names each key of the
 * type, and Pick refuses a name the document's object lacks; decide keeps each value to its kind), and the
 * read-only choices.
 */
export function settingsDefaultsView(state: RealmState) {
  const view = Object.fromEntries(SHOWN_SETTINGS.map((name) => [name, settingValue(state.userSettingsDefaults, name)])) as Pick<WireSchema<'register_queue_200_response_allOf_realm_user_settings_defaults'>, ShownSettingName>;
  return Object.assign(view, { available_notification_sounds: [...NOTIFICATION_SOUNDS], emojiset_choices: EMOJISET_CHOICES.map((set) => ({ ...set })) });
}
