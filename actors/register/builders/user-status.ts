import type { RealmState } from '../../realm/state.ts';
import { realmVersion } from '../../realm/version.ts';
import { statusView } from '../../user/views.ts';
import type { WireRegister } from '../../wire/events.ts';
import { SerializedValue, type Builder } from '../builder.ts';

type Statuses = NonNullable<WireRegister['user_status']>;

/**
 * The statuses kept per realm until it or a user's personal state changes: each is read through the user's
 * actor, about 5 ms of every registration at 10,000 users (2026-11-29).
 */
const kept = new WeakMap<RealmState, { realmVersion: number; personalVersion: number; statuses: SerializedValue<Statuses> }>();

/** fetch type `user_status`: every active user's status that says something, by user id (a spectator: none). */
export const userStatusState: Builder = ({ realm, spectator, personalOf, personalVersion }) => {
  if (spectator || !personalOf) return { user_status: {} } satisfies { user_status: Statuses };
  const version = realmVersion(realm);
  const found = kept.get(realm);
  if (found && found.realmVersion === version && found.personalVersion === personalVersion) return { user_status: found.statuses };
  const statuses: Statuses = {};
  for (const user of realm.users.values()) {
    if (!user.isActive) continue;
    const personal = personalOf(user.userId);
    if (!personal) continue;
    const view = statusView(personal);
    if (Object.keys(view).length > 0) statuses[user.userId] = view;
  }
  const serialized = new SerializedValue<Statuses>([JSON.stringify(statuses)]);
  if (personalVersion !== undefined) kept.set(realm, { realmVersion: version, personalVersion, statuses: serialized });
  return { user_status: serialized };
};
