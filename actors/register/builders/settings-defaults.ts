import { settingsDefaultsView } from '../../realm/settings-defaults/views.ts';
import type { WireRegisterKeys } from '../../wire/events.ts';
import type { Builder } from '../builder.ts';

/** fetch type `realm_user_settings_defaults`: the settings new users of the realm start from. */
export const settingsDefaultsState: Builder = ({ realm }) => ({ realm_user_settings_defaults: settingsDefaultsView(realm) }) satisfies WireRegisterKeys<'realm_user_settings_defaults'>;
