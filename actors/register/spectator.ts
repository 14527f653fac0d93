import { webPublicChannels } from '../realm/channels/views.ts';
import { Role, type RealmState, type UserProfile } from '../realm/state.ts';
import { emptyUserState } from '../user/state.ts';
import type { RegistrationView } from './builder.ts';

/**
 * Whether anonymous visitors may register in the realm (the original's "public access"): the server allows
 * web-public channels, the realm has spectator access on, and it has a web-public channel to read.
 */
export function hasPublicAccess(realm: RealmState, webPublicStreamsEnabled: boolean): boolean {
  return webPublicStreamsEnabled && realm.settings.enable_spectator_access && webPublicChannels(realm).length > 0;
}

/**
 * The caller of an anonymous registration, as the original has it: a guest (most guest limits are a
 * spectator's too) with id 0, which no real user has, and the realm's default settings.
 */
const SPECTATOR: Readonly<UserProfile> = {
  userId: 0,
  email: 'username@example.com',
  fullName: 'Anonymous User',
  role: Role.guest,
  isBot: false,
  isActive: true,
  apiKey: '',
  passwordHash: null,
  canCreateUsers: false,
  dateJoined: 0,
  timezone: '',
  avatarVersion: 1,
};

export function spectatorView(realm: RealmState): RegistrationView {
  return { realm, user: { ...SPECTATOR }, personal: emptyUserState(realm.realmId, 0, realm.userSettingsDefaults), spectator: true };
}
