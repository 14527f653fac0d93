import { userSettingsView } from '../../user/views.ts';
import type { WireRegisterKeys } from '../../wire/events.ts';
import type { Builder } from '../builder.ts';

/** fetch type `user_settings`: every setting of the caller, with the read-only choices. */
export const userSettingsState: Builder = ({ personal }) => ({ user_settings: userSettingsView(personal) }) satisfies WireRegisterKeys<'user_settings'>;
