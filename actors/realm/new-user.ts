import { badRequest } from '../errors.ts';
import { newApiKey } from '../ids.ts';
import type { RealmChange } from './changes.ts';
import { defaultProperties, SUBSCRIPTION_COLORS } from './channels/state.ts';
import type { DecideContext } from './decide.ts';
import { DEFAULT_REALM_LIMITS, requireRealmRoom } from './limits.ts';
import { settingValue } from '../user/settings.ts';
import { EmailVisibility } from './email-visibility.ts';
import { checkFullName } from './names.ts';
import { findUserByEmail, Role, type RealmState, type UserProfile } from './state.ts';

export interface NewAccount {
  email: string;
  fullName: string;
  /** scrypt hash made by the front end, or null for an account without a password */
  passwordHash: string | null;
  role?: Role;
  canCreateUsers?: boolean;
  canChangeUserEmails?: boolean;
}

/**
 * Where the realm requires unique names (`require_unique_names`), no other account, active or not, may have
 * the name in any case, as in the original.
 */
export function checkUniqueName(state: RealmState, fullName: string, self: number | null): void {
  if (!state.settings.require_unique_names) return;
  const wanted = fullName.toLowerCase();
  for (const user of state.users.values()) {
    if (user.userId !== self && user.fullName.toLowerCase() === wanted) throw badRequest('Unique names required in this organization.');
  }
}

/**
 * What every new account starts with, a person's or a bot's. The one place accounts are counted against the
 * organization's bound (RealmLimits.users), whichever way they are made.
 */
export function newAccountBasics(state: RealmState, context: DecideContext) {
  requireRealmRoom('accounts (bots and deactivated ones included)', state.users.size, (context.limits ?? DEFAULT_REALM_LIMITS).users);
  return { userId: state.nextUserId, isActive: true, apiKey: newApiKey(), dateJoined: Math.floor(context.now() / 1000), timezone: '', avatarVersion: 1 };
}

/**
 * The facts of a new account (POST /users, an accepted invitation): the user, with settings starting from
 * the realm's defaults for new users, subscribed to `channelIds`, each with its own colour.
 */
export function newUserChanges(state: RealmState, account: NewAccount, channelIds: readonly number[], context: DecideContext): RealmChange[] {
  if (findUserByEmail(state, account.email)) throw badRequest(`Email '${account.email}' already in use`);
  const fullName = checkFullName(account.fullName);
  checkUniqueName(state, fullName, null);
  const visibility = settingValue(state.userSettingsDefaults, 'email_address_visibility') as number;
  const user: UserProfile = {
    ...newAccountBasics(state, context),
    email: account.email,
    fullName,
    role: account.role ?? Role.member,
    isBot: false,
    passwordHash: account.passwordHash,
    canCreateUsers: account.canCreateUsers ?? false,
    ...(account.canChangeUserEmails && { canChangeUserEmails: true }),
    ...(visibility !== EmailVisibility.everyone && { emailAddressVisibility: visibility }),
  };
  const entries = [...new Set(channelIds)].map((channelId, i) => ({
    channelId,
    userId: user.userId,
    properties: defaultProperties(SUBSCRIPTION_COLORS[i % SUBSCRIPTION_COLORS.length]!),
  }));
  // The user's settings start from the realm's defaults as they are now; the change carries them, so replay
  // gives the same settings whatever the defaults became later.
  const settings = { ...state.userSettingsDefaults };
  const created: RealmChange = Object.keys(settings).length ? { type: 'user.created', user, settings } : { type: 'user.created', user };
  return entries.length ? [created, { type: 'subscriptions.added', entries }] : [created];
}

/** The realm's default channels that still take subscribers, which new users join. */
export function defaultChannelIds(state: RealmState): number[] {
  return [...state.channels.values()].filter((channel) => channel.isDefault && !channel.isArchived).map((channel) => channel.id);
}
