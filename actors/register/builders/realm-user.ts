import { withOptionalAvatarUrl } from '../../queue/capabilities.ts';
import { avatarFields } from '../../realm/avatars/urls.ts';
import { allowed } from '../../realm/permissions.ts';
import { isAdmin, Role, type UserProfile } from '../../realm/state.ts';
import { profileDataOf } from '../../realm/profile-fields/views.ts';
import { personView } from '../../realm/views.ts';
import type { Builder } from '../builder.ts';

/** fetch type `realm_user`: the user directory and the caller's own account. */
export const realmUserState: Builder = ({ realm, user }, { clientExtavatar, capabilities }) => {
  // Users showing the default picture may go without `avatar_url` (queue/capabilities.ts says when).
  const person = (other: UserProfile, profileData: ReturnType<typeof profileDataOf> | null) =>
    withOptionalAvatarUrl(personView(other, clientExtavatar, profileData), !other.avatarPathId, capabilities);
  const active: unknown[] = [];
  const inactive: unknown[] = [];
  for (const other of realm.users.values()) {
    (other.isActive ? active : inactive).push(person(other, profileDataOf(realm.profileFields, other.userId)));
  }
  const admin = isAdmin(user);
  const member = user.role <= Role.member;
  const { avatar_source, avatar_url, avatar_url_medium } = avatarFields(user);
  return {
    realm_users: active,
    realm_non_active_users: inactive,
    cross_realm_bots: realm.notificationBot ? [{ ...person(realm.notificationBot, null), is_system_bot: true }] : [],
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
    email: user.email,
    delivery_email: user.email,
    full_name: user.fullName,
  };
};
