import type { ApiEvent } from '../../events.ts';
import type { WireEventOf } from '../../wire/events.ts';
import type { SettingsDefaultsChange } from './changes.ts';

/** Every user of the realm learns of a changed default (the settings UI shows them to all). */
export const settingsDefaultsEvents = (change: SettingsDefaultsChange): ApiEvent[] => [
  { type: 'realm_user_settings_defaults', op: 'update', property: change.name, value: change.value } satisfies WireEventOf<'realm_user_settings_defaults', 'update'>,
];
