import { isAdmin, Role } from '../../realm/state.ts';
import { profileDataOf } from '../../realm/profile-fields/views.ts';
import { avatarUrl, personView } from '../../realm/views.ts';
import type { Builder } from '../builder.ts';

/** fetch type `realm_user`: the user directory and the caller's own account. */
export const realmUserState: Builder = ({ realm, user }, { clientExtavatar }) => {
  const active: unknown[] = [];
  const inactive: unknown[] = [];
  for (const other of realm.users.values()) {
    (other.isActive ? active : inactive).push(personView(other, clientExtavatar, profileDataOf(realm.profileFields, other.userId)));
  }
  const admin = isAdmin(user);
  const member = user.role <= Role.member;
  return {
    realm_users: active,
    realm_non_active_users: inactive,
    cross_realm_bots: realm.notificationBot ? [{ ...personView(realm.notificationBot, clientExtavatar, null), is_system_bot: true }] : [],
    avatar_source: 'G',
    avatar_url: avatarUrl(user, false),
    avatar_url_medium: avatarUrl(user, false),
    can_create_streams: member,
    can_create_public_streams: member,
    can_create_private_streams: member,
    can_create_web_public_streams: user.role === Role.owner,
    can_subscribe_other_users: member,
    can_invite_others_to_realm: member,
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
