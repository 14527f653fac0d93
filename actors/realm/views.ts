import { avatarUrl } from './avatars/urls.ts';
import type { ProfileData } from './profile-fields/views.ts';
import { Role, type UserProfile } from './state.ts';

export { avatarUrl };

/** The Zulip `User` object for the API, with the flags derived from the role. */
export interface PersonView {
  user_id: number;
  email: string;
  /** the real address, or null where the viewer may not read it (email-visibility.ts) */
  delivery_email: string | null;
  full_name: string;
  date_joined: string;
  is_active: boolean;
  is_owner: boolean;
  is_admin: boolean;
  is_guest: boolean;
  is_bot: boolean;
  /** Bots only: the original leaves both out of a person's object (GET /users/me allows neither). */
  bot_type?: number;
  bot_owner_id?: number | null;
  role: Role;
  timezone: string;
  avatar_url: string | null;
  avatar_version: number;
  profile_data?: ProfileData;
}

/**
 * `addresses`: the user's two addresses as the viewer may see them (email-visibility.ts `addressesFor`).
 * `profileData`: the user's custom profile field values (profile-fields/views.ts `profileDataOf`); null leaves
 * `profile_data` out (GET /users without include_custom_profile_fields). Bots never have it.
 */
export function personView(
  user: UserProfile,
  addresses: { email: string; delivery_email: string | null },
  clientExtavatar: boolean,
  profileData: ProfileData | null = {},
): PersonView {
  const person: PersonView = {
    user_id: user.userId,
    email: addresses.email,
    delivery_email: addresses.delivery_email,
    full_name: user.fullName,
    date_joined: new Date(user.dateJoined * 1000).toISOString(),
    is_active: user.isActive,
    is_owner: user.role === Role.owner,
    is_admin: user.role <= Role.administrator,
    is_guest: user.role === Role.guest,
    is_bot: user.isBot,
    role: user.role,
    timezone: user.timezone,
    avatar_url: avatarUrl(user, clientExtavatar),
    avatar_version: user.avatarVersion,
  };
  if (user.isBot) {
    person.bot_type = user.bot?.type ?? 1;
    person.bot_owner_id = user.bot?.ownerId ?? null;
  } else if (profileData) person.profile_data = profileData;
  return person;
}
