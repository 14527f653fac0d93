import { badRequest, ChatError, ErrorCode, notAdmin } from '../errors.ts';
import { newApiKey } from '../ids.ts';
import { decideAttachment } from './attachments/decide.ts';
import { decideAvatar } from './avatars/decide.ts';
import { decideBot } from './bots/decide.ts';
import type { RealmChange } from './changes.ts';
import { decideChannel } from './channels/decide.ts';
import { defaultProperties, SUBSCRIPTION_COLORS } from './channels/state.ts';
import { decideEmoji } from './emoji/decide.ts';
import { DEFAULT_REALM_LIMITS, type RealmLimits } from './limits.ts';
import { decideGroup } from './groups/decide.ts';
import { decideLinkifier } from './linkifiers/decide.ts';
import { decideAcceptInvitation } from './invitations/accept.ts';
import { decideInvitation } from './invitations/decide.ts';
import { decideMessage } from './messages/decide.ts';
import { checkUniqueName, defaultChannelIds, newUserChanges } from './new-user.ts';
import { checkFullName } from './names.ts';
import { moveNotices } from './notifications/moves.ts';
import { newNotificationBot } from './notifications/state.ts';
import { newChannelNotices, newSubscriptionNotices, signupNotices } from './notifications/decide.ts';
import { decideReport } from './notifications/report.ts';
import { decidePlayground } from './playgrounds/decide.ts';
import { decideChannelFolder } from './channel-folders/decide.ts';
import { addressNotAllowed, decideRealmDomain } from './domains/decide.ts';
import { decideDefaultChannelGroup } from './default-channel-groups/decide.ts';
import { decideReminder } from './notifications/reminders.ts';
import { decideWelcome } from './notifications/welcome.ts';
import { decideProfileField } from './profile-fields/decide.ts';
import { decideRealmSettings } from './settings/decide.ts';
import { ANNOUNCEMENT_SETTINGS } from './settings/state.ts';
import { decideSettingsDefaults } from './settings-defaults/decide.ts';
import type { Caller, RealmCommand } from './commands.ts';
import { decideSubmessage } from './submessages/decide.ts';
import { decideRealmExport } from './exports/decide.ts';
import { visibilityOf } from './email-visibility.ts';
import { activeOwnerCount, findUserByEmail, isAdmin, Role, type RealmState, type UserProfile } from './state.ts';

export interface Clock {
  /** UNIX milliseconds */
  now(): number;
}

/**
 * What a realm decision may read beyond the realm: the time, and personal facts kept by user actors that a
 * decision records into its changes (so replay never needs to read them again).
 */
export interface DecideContext extends Clock {
  /** the realm's users who have alert words, with theirs (lower-case); absent: none */
  alertWords?(): ReadonlyMap<number, readonly string[]>;
  /** how many groups, channels, custom emoji, invitations and accounts the organization may have; absent: DEFAULT_REALM_LIMITS */
  limits?: RealmLimits;
}

/**
 * Validates a command against the current realm state and returns the facts it produces. Pure: it reads
 * the state, never changes it; every value the server chooses (ids, keys, times) is in the changes.
 */
export function decideRealm(state: RealmState, command: RealmCommand, clock: DecideContext): RealmChange[] {
  switch (command.type) {
    case 'user.create': {
      const changes = decideCreateUser(state, command, clock);
      return [...changes, ...signupNotices(state, changes, clock)];
    }
    case 'user.deactivate': {
      const caller = requireAdmin(state, command.caller);
      const target = requireHuman(state, command.userId);
      if (!target.isActive) throw badRequest('User is already deactivated');
      if (target.role === Role.owner) {
        if (caller && caller.role !== Role.owner) throw ownerRequired();
        if (activeOwnerCount(state) <= 1) throw badRequest('Cannot deactivate the only organization owner');
      }
      return deactivation(state, target);
    }
    case 'user.deactivate_own': {
      const target = requireUser(state, command.userId);
      if (!target.isActive) throw badRequest('User is already deactivated');
      // The original's order: an organization must keep an active user, then an owner.
      let active = 0;
      for (const user of state.users.values()) if (user.isActive) active++;
      if (active <= 1) throw lastUser('user', false);
      if (target.role === Role.owner && activeOwnerCount(state) <= 1) throw lastUser('organization owner', true);
      return deactivation(state, target);
    }
    case 'user.reactivate': {
      requireAdmin(state, command.caller);
      const target = requireHuman(state, command.userId);
      if (target.isActive) throw badRequest('User is already active');
      return [{ type: 'user.reactivated', userId: target.userId }];
    }
    case 'user.update':
      return decideUpdateUser(state, command);
    case 'group.create':
    case 'group.update':
    case 'group.members':
      return decideGroup(state, command, clock, clock.limits ?? DEFAULT_REALM_LIMITS);
    case 'channel.subscribe': {
      const changes = decideChannel(state, command, clock);
      const announced = [...changes, ...newChannelNotices(state, command, changes, clock)];
      return [...announced, ...newSubscriptionNotices(state, command, announced, clock).changes];
    }
    case 'channel.subscriptions_edit':
    case 'channel.unsubscribe':
    case 'channel.update':
    case 'subscription.properties':
      return decideChannel(state, command, clock);
    case 'settings_defaults.update':
      return decideSettingsDefaults(state, command);
    case 'realm.update': {
      const changes: RealmChange[] = decideRealmSettings(state, command);
      // Naming a channel for notices brings the bot that posts them into being, in the same record.
      const needsBot = changes.some((change) => change.type === 'realm.property_changed' && (ANNOUNCEMENT_SETTINGS as readonly string[]).includes(change.name) && change.value !== -1);
      if (needsBot && !state.notificationBot && command.botDomain) {
        changes.unshift({ type: 'notification_bot.created', bot: newNotificationBot(state, command.botDomain, clock.now()) });
      }
      return changes;
    }
    case 'profile_field.create':
    case 'profile_field.update':
    case 'profile_field.delete':
    case 'profile_field.reorder':
    case 'profile_data.update':
      return decideProfileField(state, command);
    case 'bot.create':
    case 'bot.update':
    case 'bot.deactivate':
    case 'bot.regenerate_api_key':
      return decideBot(state, command, clock);
    case 'message.edit':
      return moveNotices(state, command, decideMessage(state, command, clock), clock);
    case 'message.send':
    case 'message.delete':
    case 'topic.delete':
    case 'reaction.add':
    case 'reaction.remove':
    case 'message.flags':
    case 'message.mark_read':
      return decideMessage(state, command, clock);
    case 'message.report':
      return decideReport(state, command, clock);
    case 'submessage.add':
      return decideSubmessage(state, command);
    case 'realm_export.request':
    case 'realm_export.complete':
    case 'realm_export.fail':
      return decideRealmExport(state, command, clock);
    case 'attachment.upload':
    case 'attachment.delete':
      return decideAttachment(state, command, clock);
    case 'emoji.add':
    case 'emoji.deactivate':
      return decideEmoji(state, command, clock.limits ?? DEFAULT_REALM_LIMITS);
    case 'linkifier.add':
    case 'linkifier.update':
    case 'linkifier.remove':
    case 'linkifier.reorder':
      return decideLinkifier(state, command);
    case 'playground.add':
    case 'playground.remove':
      return decidePlayground(state, command);
    case 'realm.deactivate': {
      const caller = command.caller.kind === 'user' ? state.users.get(command.caller.userId) : null;
      if (caller !== null && caller?.role !== Role.owner) throw ownerRequired();
      if (state.deactivated) throw badRequest('This organization is already deactivated');
      return [{ type: 'realm.deactivated' }];
    }
    case 'channel_folder.create':
    case 'channel_folder.update':
    case 'channel_folders.reorder':
      return decideChannelFolder(state, command, clock);
    case 'realm_domain.add':
    case 'realm_domain.change':
    case 'realm_domain.remove':
      return decideRealmDomain(state, command);
    case 'default_channel_group.create':
    case 'default_channel_group.update':
    case 'default_channel_group.channels':
    case 'default_channel_group.delete':
      return decideDefaultChannelGroup(state, command);
    case 'notification_bot.ensure':
    case 'reminder.deliver':
      return decideReminder(state, command, clock);
    case 'welcome_message.test':
      return decideWelcome(state, command, clock);
    case 'avatar.set':
      return decideAvatar(state, command);
    case 'invite.send':
    case 'invite.create_link':
    case 'invite.revoke':
    case 'invite.resend':
      return decideInvitation(state, command, clock, clock.limits ?? DEFAULT_REALM_LIMITS);
    case 'invite.accept': {
      const changes = decideAcceptInvitation(state, command, clock);
      return [...changes, ...signupNotices(state, changes, clock)];
    }
    case 'user.regenerate_api_key': {
      const user = requireUser(state, command.userId);
      return [{ type: 'user.api_key_changed', userId: user.userId, apiKey: newApiKey() }];
    }
    case 'user.change_password': {
      if (command.caller.kind === 'user' && command.caller.userId !== command.userId) throw notAdmin();
      const user = requireUser(state, command.userId);
      return [{ type: 'user.password_changed', userId: user.userId, passwordHash: command.passwordHash }];
    }
    case 'user.change_email':
      return decideChangeEmail(state, command);
    case 'user.set_email_visibility': {
      const user = requireUser(state, command.userId);
      const previous = visibilityOf(user);
      // A bot's address is always visible to everyone, as in the original.
      return user.isBot || previous === command.visibility ? [] : [{ type: 'user.email_visibility_changed', userId: user.userId, visibility: command.visibility, previous }];
    }
  }
}

function decideCreateUser(
  state: RealmState,
  command: Extract<RealmCommand, { type: 'user.create' }>,
  clock: DecideContext,
): RealmChange[] {
  const caller = requireAdmin(state, command.caller);
  if (caller && !caller.canCreateUsers) {
    throw new ChatError(ErrorCode.UNAUTHORIZED_PRINCIPAL, 'User not authorized to create users');
  }
  if (caller && addressNotAllowed(state, command.email)) throw badRequest(`Email '${command.email}' not allowed in this organization`);
  // New users join the realm's default channels.
  return newUserChanges(state, command, defaultChannelIds(state), clock);
}

function decideUpdateUser(state: RealmState, command: Extract<RealmCommand, { type: 'user.update' }>): RealmChange[] {
  // A user may change their own full name and time zone (PATCH /settings), and nothing else of their own account.
  const ownName = command.caller.kind === 'user' && command.caller.userId === command.userId && command.role === undefined;
  const caller = ownName ? null : requireAdmin(state, command.caller);
  const target = requireUser(state, command.userId);
  const change: Extract<RealmChange, { type: 'user.updated' }> = { type: 'user.updated', userId: target.userId };
  const fullName = command.fullName === undefined ? undefined : checkFullName(command.fullName);
  if (fullName !== undefined && fullName !== target.fullName) {
    if (ownName && state.settings.name_changes_disabled && !isAdmin(target)) throw badRequest('Name changes are disabled in this organization.');
    checkUniqueName(state, fullName, target.userId);
    change.fullName = fullName;
    change.previousFullName = target.fullName;
  }
  if (command.timezone !== undefined && command.timezone !== target.timezone) change.timezone = command.timezone;
  if (command.role !== undefined && command.role !== target.role) {
    const touchesOwner = command.role === Role.owner || target.role === Role.owner;
    if (touchesOwner && caller && caller.role !== Role.owner) throw ownerRequired();
    if (target.role === Role.owner && target.isActive && activeOwnerCount(state) <= 1) {
      throw badRequest('The owner permission cannot be removed from the only organization owner.');
    }
    change.role = command.role;
  }
  return change.fullName === undefined && change.role === undefined && change.timezone === undefined ? [] : [change];
}

/** A followed confirmation link: the address must still be free, as it may have been taken since the request. */
function decideChangeEmail(state: RealmState, command: Extract<RealmCommand, { type: 'user.change_email' }>): RealmChange[] {
  // Changing an address directly (PATCH /users/{id} `new_email`) takes the server-level permission, as in the original.
  const forOther = command.administered === true;
  if (command.caller.kind === 'user' && command.caller.userId !== command.userId && !forOther) throw notAdmin();
  if (forOther && command.caller.kind === 'user') {
    const caller = state.users.get(command.caller.kind === 'user' ? command.caller.userId : -1);
    if (!caller?.isActive || !caller.canChangeUserEmails) throw new ChatError(ErrorCode.UNAUTHORIZED_PRINCIPAL, 'User not authorized to change user emails');
  }
  const user = requireUser(state, command.userId);
  // Already the address: a confirmation repeated after the change was made, which changes nothing.
  if (user.email === command.email) return [];
  if (command.caller.kind === 'user' && !forOther && !emailChangeAllowed(state, user)) throw badRequest('Email address changes are disabled in this organization.');
  if (forOther && addressNotAllowed(state, command.email)) throw badRequest(`Email '${command.email}' not allowed in this organization`);
  const holder = findUserByEmail(state, command.email);
  if (holder && holder.userId !== user.userId) throw badRequest(`Email '${command.email}' already in use`);
  return [{ type: 'user.email_changed', userId: user.userId, email: command.email }];
}

/** Users change their own address unless the realm turned that off for all but its administrators. */
export const emailChangeAllowed = (state: RealmState, user: UserProfile) => !state.settings.email_changes_disabled || isAdmin(user);

/** The calling user if it is an administrator; null for the operator (who may do anything). */
function requireAdmin(state: RealmState, caller: Caller): UserProfile | null {
  if (caller.kind === 'operator') return null;
  const user = state.users.get(caller.userId);
  if (!user || !isAdmin(user)) throw notAdmin();
  return user;
}

function requireUser(state: RealmState, userId: number): UserProfile {
  const user = state.users.get(userId);
  if (!user) throw badRequest('No such user');
  return user;
}

function requireHuman(state: RealmState, userId: number): UserProfile {
  const user = requireUser(state, userId);
  if (user.isBot) throw badRequest('No such user');
  return user;
}

/** The user, and its bots, which stop with it (the original's rule: a bot acts for its owner). */
function deactivation(state: RealmState, target: UserProfile): RealmChange[] {
  const bots = [...state.users.values()].filter((user) => user.isBot && user.isActive && user.bot?.ownerId === target.userId);
  return [target, ...bots].map((user): RealmChange => ({ type: 'user.deactivated', userId: user.userId }));
}

const lastUser = (entity: 'user' | 'organization owner', isLastOwner: boolean) =>
  new ChatError(ErrorCode.CANNOT_DEACTIVATE_LAST_USER, `Cannot deactivate the only ${entity}`, 400, { entity, is_last_owner: isLastOwner });

const ownerRequired = () => new ChatError(ErrorCode.UNAUTHORIZED_PRINCIPAL, 'Must be an organization owner');
