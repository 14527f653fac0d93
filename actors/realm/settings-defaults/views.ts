import { EMOJISET_CHOICES, NOTIFICATION_SOUNDS } from '../../user/setting-values.ts';
import { settingValue } from '../../user/settings.ts';
import type { RealmState } from '../state.ts';
import { SHOWN_SETTINGS } from './state.ts';

/** `realm_user_settings_defaults`: every default with its current value, and the read-only choices. */
export function settingsDefaultsView(state: RealmState): Record<string, unknown> {
  const view: Record<string, unknown> = Object.fromEntries(SHOWN_SETTINGS.map((name) => [name, settingValue(state.userSettingsDefaults, name)]));
  view.available_notification_sounds = [...NOTIFICATION_SOUNDS];
  view.emojiset_choices = EMOJISET_CHOICES.map((set) => ({ ...set }));
  return view;
}
