import { realmPresences } from '../../presence/views.ts';
import type { WireRegister, WireRegisterKeys } from '../../wire/events.ts';
import { SerializedValue, type Builder } from '../builder.ts';

/**
 * fetch type `presence`: `presences` (modern and keyed by user id with `slim_presence`, else legacy and keyed
 * by email), the `presence_last_update_id` to poll incrementally from, and the `server_timestamp` they are as of.
 */
export const presenceState: Builder = ({ realm, user, presence, spectator }, options) => {
  const now = options.now / 1000;
  if (spectator) return { presences: {}, server_timestamp: now } satisfies WireRegisterKeys<'presences' | 'server_timestamp'>;
  const { parts, lastUpdateId } = presence
    ? realmPresences(presence, realm, { slim: options.slimPresence ?? false, lastUpdateId: -1, historyLimitDays: options.presenceHistoryLimitDays, now, viewerId: user.userId })
    : { parts: ['{}'], lastUpdateId: -1 };
  const presences = new SerializedValue<WireRegister['presences']>(parts);
  return { presences, presence_last_update_id: lastUpdateId, server_timestamp: now } satisfies { presences: SerializedValue<WireRegister['presences']> } & WireRegisterKeys<'presence_last_update_id' | 'server_timestamp'>;
};
