import { realmBotsView } from '../../realm/bots/views.ts';
import type { WireRegisterKeys } from '../../wire/events.ts';
import type { Builder } from '../builder.ts';

/** fetch type `realm_bot`: the bots the user administers (every bot, for an administrator). */
export const realmBotsState: Builder = ({ realm, user }) => ({ realm_bots: realmBotsView(realm, user) }) satisfies WireRegisterKeys<'realm_bots'>;
