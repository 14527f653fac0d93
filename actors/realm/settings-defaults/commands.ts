import type { Caller } from '../commands.ts';

export type SettingsDefaultsCommand =
  /** the settings as the request sent them, unchecked: decide validates them with the user settings table */
  { type: 'settings_defaults.update'; caller: Caller; settings: Record<string, unknown> };
