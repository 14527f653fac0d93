import type { SettingValue } from '../../user/settings.ts';

/** One default for new users changed; users made later start from it. */
export type SettingsDefaultsChange = { type: 'settings_default.changed'; name: string; value: SettingValue };
