import { Role, type RealmState, type UserProfile } from '../state.ts';

/**
 * The notification bot: the system bot the server posts its own notices as (new channels, new users, moved
 * topics). The original keeps it in an internal realm and lists it among `cross_realm_bots`; here it lives
 * in its realm's state outside `users`, so user directories, counts and logins never see it.
 */
export const NOTIFICATION_BOT_NAME = 'Notification Bot';

/** The bot's profile, with the next user id: made by the change that first needs it, so replay is exact. */
export function newNotificationBot(state: RealmState, domain: string, nowMs: number): UserProfile {
  return {
    userId: state.nextUserId,
    email: `notification-bot@${domain}`,
    fullName: NOTIFICATION_BOT_NAME,
    role: Role.member,
    isBot: true,
    isActive: true,
    // Nobody authenticates as the bot: its key is never handed out nor indexed.
    apiKey: '',
    passwordHash: null,
    canCreateUsers: false,
    dateJoined: Math.floor(nowMs / 1000),
    timezone: '',
    avatarVersion: 1,
  };
}

/** A message's sender: a user of the realm, or its notification bot. */
export function senderProfile(state: RealmState, userId: number): UserProfile | undefined {
  return state.users.get(userId) ?? (state.notificationBot?.userId === userId ? state.notificationBot : undefined);
}
