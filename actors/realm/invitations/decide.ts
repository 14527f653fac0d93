import { badRequest, ChatError, ErrorCode, notAdmin } from '../../errors.ts';
import { randomString } from '../../ids.ts';
import { mayAddOthers } from '../channels/decide.ts';
import { addressNotAllowed } from '../domains/decide.ts';
import type { Caller } from '../commands.ts';
import type { Clock } from '../decide.ts';
import { mayAddMembers } from '../groups/decide.ts';
import { requireRealmRoom, type RealmLimits } from '../limits.ts';
import { allowed } from '../permissions.ts';
import { findUserByEmail, isAdmin, Role, type RealmState, type UserProfile } from '../state.ts';
import type { InvitationChange } from './changes.ts';
import type { DailyInvitationLimit, InvitationCommand } from './commands.ts';
import { fillsBound, INVITATION_DAY_SECONDS, type Invitation, type InvitationTerms } from './state.ts';
import { managesInvitation } from './views.ts';

/** The original's confirmation keys: 24 random characters. */
const KEY_LENGTH = 24;

type Send = Extract<InvitationCommand, { type: 'invite.send' }>;
type CreateLink = Extract<InvitationCommand, { type: 'invite.create_link' }>;

/** An address skipped by POST /invites: [address, why, whether its account is deactivated], as the API lists them. */
export type SkippedInvitee = [string, string, boolean];

export const insufficientPermission = () => badRequest('Insufficient permission');
const noSuchInvitation = () => badRequest('No such invitation');

export function decideInvitation(
  state: RealmState,
  command: Exclude<InvitationCommand, { type: 'invite.accept' }>,
  clock: Clock,
  limits: RealmLimits,
): InvitationChange[] {
  switch (command.type) {
    case 'invite.send':
      return decideSend(state, command, clock, limits);
    case 'invite.create_link': {
      const caller = callerOf(state, command.caller);
      if (caller && !allowed(state, 'create_multiuse_invite_group', caller.userId)) throw insufficientPermission();
      const invitation = newInvitation(state, command, caller, clock, { multiuse: true, email: null, id: state.invitations.nextLinkId, notifyReferrerOnJoin: false });
      return [...makeRoom(state, true, 1, clock.now(), limits.invitations), { type: 'invitations.created', invitations: [invitation] }];
    }
    case 'invite.revoke': {
      const invitation = (command.multiuse ? state.invitations.links : state.invitations.emails).get(command.id);
      // A used invitation is not pending any more: there is nothing to revoke.
      if (!invitation || invitation.status === 'used') throw noSuchInvitation();
      requireManager(state, command.caller, invitation);
      if (invitation.status === 'revoked') throw badRequest('Invitation has already been revoked');
      return [{ type: 'invitation.revoked', id: invitation.id, multiuse: invitation.multiuse }];
    }
    case 'invite.resend': {
      const invitation = state.invitations.emails.get(command.id);
      if (!invitation || invitation.status !== 'active') throw noSuchInvitation();
      requireManager(state, command.caller, invitation);
      // The link is valid for as long again as when it was sent, from now.
      const at = Math.floor(clock.now() / 1000);
      checkDailyLimit(state, at, 1, command.dailyLimit);
      const expiresAt = invitation.expiresAt === null ? null : at + (invitation.expiresAt - invitation.invitedAt);
      return [{ type: 'invitation.resent', id: invitation.id, at, expiresAt }];
    }
  }
}

/**
 * POST /invites for addresses already checked for form (by the front end). Addresses that have an account
 * are skipped (`skippedInvitees`); when every one is, nothing is sent and the error lists them all.
 */
function decideSend(state: RealmState, command: Send, clock: Clock, limits: RealmLimits): InvitationChange[] {
  const caller = callerOf(state, command.caller);
  if (caller && !allowed(state, 'can_invite_users_group', caller.userId)) throw insufficientPermission();
  const emails = uniqueAddresses(command.emails);
  if (emails.length === 0) throw badRequest('You must specify at least one email address.');
  checkTerms(state, command, caller);
  const outside = emails.flatMap((email): SkippedInvitee[] => {
    const refused = addressNotAllowed(state, email);
    return refused ? [[email, refused === 'plus' ? 'Email addresses containing + are not allowed.' : 'Outside your domain.', false]] : [];
  });
  if (outside.length) throw invitationFailed("Some emails did not validate, so we didn't send any invitations.", outside, false);
  const skipped = skippedInvitees(state, emails);
  if (skipped.length === emails.length) throw invitationFailed("We weren't able to invite anyone.", skipped, false);
  const skippedSet = new Set(skipped.map(([email]) => email));
  let id = state.invitations.nextEmailId;
  const invitations = emails
    .filter((email) => !skippedSet.has(email))
    .map((email) => newInvitation(state, command, caller, clock, { multiuse: false, email, id: id++, notifyReferrerOnJoin: command.notifyReferrerOnJoin }));
  checkDailyLimit(state, Math.floor(clock.now() / 1000), invitations.length, command.dailyLimit);
  checkAccountRoom(state, invitations.length, limits.users);
  return [...makeRoom(state, false, invitations.length, clock.now(), limits.invitations), { type: 'invitations.created', invitations }];
}

/**
 * Room for `adding` new invitations of a kind within `limit`: the oldest that can no longer be used (at
 * `now`, UNIX ms) are forgotten, as few as make room; when the usable ones alone leave too little, refused.
 * The change names them, so that a replay forgets the same ones whatever the time then.
 */
function makeRoom(state: RealmState, multiuse: boolean, adding: number, now: number, limit: number): InvitationChange[] {
  const kept = multiuse ? state.invitations.links : state.invitations.emails;
  const excess = kept.size + adding - limit;
  if (excess <= 0) return [];
  const ids: number[] = [];
  // Oldest first: a kind's map holds its invitations in the order they were made.
  const hasAccount = (email: string) => findUserByEmail(state, email) !== undefined;
  for (const invitation of kept.values()) {
    if (ids.length === excess) break;
    if (!fillsBound(invitation, now, hasAccount)) ids.push(invitation.id);
  }
  if (ids.length < excess) requireRealmRoom(multiuse ? 'usable invitation links' : 'usable email invitations', kept.size - ids.length, limit, adding);
  return [{ type: 'invitations.forgotten', multiuse, ids }];
}

/**
 * Refuses invitations for more people than the organization has room to make accounts for (the original's
 * license check, its `license_limit_reached`); pending invitations are not counted, as in the original.
 */
function checkAccountRoom(state: RealmState, count: number, limit: number): void {
  if (state.users.size + count <= limit) return;
  throw new ChatError(ErrorCode.INVITATION_FAILED,
    `This organization has ${state.users.size} accounts (bots and deactivated ones included) and may have at most ${limit}: there is no room for ${count} more. No invitations were sent.`,
    400, { errors: [], sent_invitations: false, license_limit_reached: true, daily_limit_reached: false });
}

/**
 * Refuses mails that would take the organization's invitation mails of the last day past its limit: the
 * original's realm.max_invites, so that invitations are no way to send spam. All or none of a request's go.
 */
function checkDailyLimit(state: RealmState, now: number, count: number, limit: DailyInvitationLimit): void {
  if (limit === null) return;
  const recent = state.invitations.mailedAt.filter((at) => at > now - INVITATION_DAY_SECONDS).length;
  if (recent + count <= limit) return;
  throw new ChatError(ErrorCode.INVITATION_FAILED,
    'To protect users, this server limits the number of invitations you can send in one day. Because you have reached the limit, no invitations were sent.',
    400, { errors: [], sent_invitations: false, license_limit_reached: false, daily_limit_reached: true });
}

/** The addresses POST /invites skips because an account has them, with the API's reasons. */
export function skippedInvitees(state: RealmState, emails: readonly string[]): SkippedInvitee[] {
  const out: SkippedInvitee[] = [];
  for (const email of uniqueAddresses(emails)) {
    const user = findUserByEmail(state, email);
    if (user) out.push(user.isActive ? [email, 'Already has an account.', false] : [email, 'Account has been deactivated.', true]);
  }
  return out;
}

/** The INVITATION_FAILED error: what was skipped and whether the others were sent. */
export function invitationFailed(message: string, errors: SkippedInvitee[], sent: boolean): ChatError {
  return new ChatError(ErrorCode.INVITATION_FAILED, message, 400, {
    errors, sent_invitations: sent, license_limit_reached: false, daily_limit_reached: false,
  });
}

/** Each address once (the first spelling wins), in the order given. */
function uniqueAddresses(emails: readonly string[]): string[] {
  const seen = new Map<string, string>();
  for (const email of emails) if (!seen.has(email.toLowerCase())) seen.set(email.toLowerCase(), email);
  return [...seen.values()];
}

function callerOf(state: RealmState, caller: Caller): UserProfile | null {
  if (caller.kind === 'operator') return null;
  const user = state.users.get(caller.userId);
  if (!user || !user.isActive) throw insufficientPermission();
  return user;
}

function requireManager(state: RealmState, caller: Caller, invitation: Invitation): void {
  const user = callerOf(state, caller);
  if (user && !managesInvitation(user, invitation)) throw notAdmin();
}

/**
 * What an invitation may give: a role no stronger than the inviter's; channels that are default ones or that
 * the inviter may subscribe others to; groups the inviter may add members to.
 */
function checkTerms(state: RealmState, terms: InvitationTerms & { expiresInMinutes: number | null }, caller: UserProfile | null): void {
  if (caller && terms.invitedAs < caller.role) {
    if (terms.invitedAs === Role.owner) throw new ChatError(ErrorCode.UNAUTHORIZED_PRINCIPAL, 'Must be an organization owner');
    if (terms.invitedAs === Role.administrator) throw notAdmin();
    throw new ChatError(ErrorCode.UNAUTHORIZED_PRINCIPAL, 'Must be an organization administrator or moderator');
  }
  if (terms.expiresInMinutes !== null && !(Number.isSafeInteger(terms.expiresInMinutes) && terms.expiresInMinutes > 0)) {
    throw badRequest('Invalid invite_expires_in_minutes');
  }
  for (const id of terms.channelIds) {
    const channel = state.channels.get(id);
    const visible = channel && !channel.isArchived && (!channel.inviteOnly || caller === null || isAdmin(caller) || state.subscriptions.get(id)?.has(caller.userId));
    if (!channel || !visible) throw badRequest(`Invalid channel ID ${id}. No invites were sent.`);
    if (!channel.isDefault && !mayAddOthers(state, channel, caller?.userId ?? null)) {
      throw badRequest('You do not have permission to subscribe other users to channels.');
    }
  }
  for (const id of terms.groupIds) {
    const group = state.groups.get(id);
    if (!group || group.deactivated || group.isSystemGroup) throw badRequest(`Invalid user group ID: ${id}`);
    if (caller && !mayAddMembers(state, group, caller.userId)) throw insufficientPermission();
  }
}

function newInvitation(
  state: RealmState,
  command: Send | CreateLink,
  caller: UserProfile | null,
  clock: Clock,
  kind: Pick<Invitation, 'multiuse' | 'email' | 'id' | 'notifyReferrerOnJoin'>,
): Invitation {
  if (kind.multiuse) checkTerms(state, command, caller);
  const now = Math.floor(clock.now() / 1000);
  return {
    ...kind,
    key: randomString(KEY_LENGTH).toLowerCase(),
    invitedBy: caller?.userId ?? 0,
    invitedAs: command.invitedAs,
    invitedAt: now,
    expiresAt: command.expiresInMinutes === null ? null : now + command.expiresInMinutes * 60,
    channelIds: [...new Set(command.channelIds)],
    groupIds: [...new Set(command.groupIds)],
    includeRealmDefaultSubscriptions: command.includeRealmDefaultSubscriptions,
    status: 'active',
  };
}
