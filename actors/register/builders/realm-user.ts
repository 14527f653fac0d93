import { AVATAR_URL_OPTIONAL, withOptionalAvatarUrl } from '../../queue/capabilities.ts';
import { avatarFields } from '../../realm/avatars/urls.ts';
import { allowed } from '../../realm/permissions.ts';
import { isAdmin, Role, type UserProfile } from '../../realm/state.ts';
import { profileDataOf } from '../../realm/profile-fields/views.ts';
import { accessFilter, hiddenBy, unknownUserView } from '../../realm/user-access.ts';
import { personView } from '../../realm/views.ts';
import { addressesFor, displayEmail } from '../../realm/email-visibility.ts';
import type { WireRegister, WireRegisterKeys } from '../../wire/events.ts';
import { SerializedValue, type Builder, type RegistrationView } from '../builder.ts';
import { sharedUserLists } from '../../realm/user-directory.ts';

/**
 * fetch type `realm_user`: the user directory and the caller's own account. A guest limited by
 * `can_access_all_users_group` gets the users it may not access as "Unknown user" placeholders, or, with
 * the `user_list_incomplete` capability, not at all. A spectator sees no address, time zone or profile data.
 */
export const realmUserState: Builder = ({ realm, user, spectator }, { clientExtavatar, capabilities, realmUrl }) => {
  const accessible = spectator ? null : accessFilter(realm, user.userId);
  // Users showing the default picture may go without `avatar_url` (queue/capabilities.ts says when).
  const person = (other: UserProfile, addresses: { email: string; delivery_email: string | null }, profileData: ReturnType<typeof profileDataOf> | null) =>
    withOptionalAvatarUrl(personView(other, addresses, clientExtavatar, profileData), !other.avatarPathId, capabilities);
  const lists = !spectator && accessible === null ? sharedLists(realm, user, clientExtavatar, capabilities, person) : userLists(realm, user, spectator === true, accessible, capabilities, realmUrl, person);
  const admin = isAdmin(user);
  const member = user.role <= Role.member;
  const { avatar_source, avatar_url, avatar_url_medium } = avatarFields(user);
  return {
    ...lists,
    cross_realm_bots: realm.notificationBot ? [{ ...person(realm.notificationBot, addressesFor(realm, user.userId, realm.notificationBot), null), is_system_bot: true }] : [],
    avatar_source,
    avatar_url,
    avatar_url_medium,
    can_create_streams: member,
    can_create_public_streams: member,
    can_create_private_streams: member,
    can_create_web_public_streams: user.role === Role.owner,
    can_subscribe_other_users: member,
    can_invite_others_to_realm: allowed(realm, 'can_invite_users_group', user.userId),
    is_admin: admin,
    is_owner: user.role === Role.owner,
    is_moderator: user.role <= Role.moderator,
    is_guest: user.role === Role.guest,
    user_id: user.userId,
    email: displayEmail(realm, user),
    delivery_email: user.email,
    full_name: user.fullName,
  } satisfies Omit<WireRegisterKeys<RealmUserKeys>, ListKeys> & UserLists;
};

type PersonOf = (other: UserProfile, addresses: { email: string; delivery_email: string | null }, profileData: ReturnType<typeof profileDataOf> | null) => RealmUserEntry;

/**
 * The lists for a viewer who may access every user: one text per viewer role and parameters, shared until the
 * realm changes (realm/user-directory.ts). At 10,000 users they are 3 MB of JSON, which each registration
 * built and serialized in 30-40 ms of the event loop before (2026-11-29).
 */
function sharedLists(realm: RegistrationView['realm'], viewer: UserProfile, clientExtavatar: boolean, capabilities: Readonly<Record<string, boolean>> | undefined, person: PersonOf): UserLists {
  const [active, inactive] = sharedUserLists(realm, viewer, {
    key: `registration:${clientExtavatar}:${capabilities?.[AVATAR_URL_OPTIONAL] === true}`,
    lists: 2,
    listOf: (other) => (other.isActive ? 0 : 1),
    objectOf: (other, addresses) => person(other, addresses, profileDataOf(realm.profileFields, other.userId)),
  });
  return { realm_users: new SerializedValue(active!.parts), realm_non_active_users: new SerializedValue(inactive!.parts) };
}

/** The lists made for one registration: a spectator's, or a guest's who may not access every user. */
function userLists(
  realm: RegistrationView['realm'], viewer: UserProfile, spectator: boolean, accessible: Set<number> | null,
  capabilities: Readonly<Record<string, boolean>> | undefined, realmUrl: string, person: PersonOf,
): UserLists {
  const host = new URL(realmUrl).hostname;
  const incomplete = capabilities?.user_list_incomplete === true;
  const active: RealmUserEntry[] = [];
  const inactive: RealmUserEntry[] = [];
  for (const other of realm.users.values()) {
    if (hiddenBy(accessible, other)) {
      // The placeholder is active whatever the user is: a limited guest learns nothing more of it.
      if (!incomplete) active.push(unknownUserView(other.userId));
      continue;
    }
    const view = spectator ? spectatorPersonView(other, host) : person(other, addressesFor(realm, viewer.userId, other), profileDataOf(realm.profileFields, other.userId));
    (other.isActive ? active : inactive).push(view);
  }
  return { realm_users: active, realm_non_active_users: inactive };
}

/**
 * A user as a spectator sees it: a person's address made from the id (the real one is not for the Internet,
 * nor is its avatar hash), no time zone or profile data, and only the day it joined.
 */
function spectatorPersonView(user: UserProfile, host: string) {
  const email = user.isBot ? user.email : `user${user.userId}@${host}`;
  const { timezone: _timezone, ...person } = personView(user, { email, delivery_email: null }, false, null);
  return { ...person, date_joined: person.date_joined.slice(0, 10) };
}

type RealmUserEntry = NonNullable<WireRegister['realm_users']>[number];
type ListKeys = 'realm_users' | 'realm_non_active_users';
type UserLists = { [K in ListKeys]: RealmUserEntry[] | SerializedValue<RealmUserEntry[]> };

type RealmUserKeys =
  | 'realm_users' | 'realm_non_active_users' | 'cross_realm_bots' | 'avatar_source' | 'avatar_url' | 'avatar_url_medium'
  | 'can_create_streams' | 'can_create_public_streams' | 'can_create_private_streams' | 'can_create_web_public_streams'
  | 'can_subscribe_other_users' | 'can_invite_others_to_realm' | 'is_admin' | 'is_owner' | 'is_moderator' | 'is_guest'
  | 'user_id' | 'email' | 'delivery_email' | 'full_name';
