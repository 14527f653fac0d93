import { badRequest, ChatError, ErrorCode } from '../../errors.ts';
import { addressNotAllowed } from '../domains/decide.ts';
import type { RealmChange } from '../changes.ts';
import type { DecideContext } from '../decide.ts';
import { defaultChannelIds, newUserChanges } from '../new-user.ts';
import { findUserByEmail, type RealmState } from '../state.ts';
import type { InvitationCommand } from './commands.ts';
import type { Invitation } from './state.ts';

type Accept = Extract<InvitationCommand, { type: 'invite.accept' }>;

const linkError = (message: string, status = 400) => new ChatError(ErrorCode.BAD_REQUEST, message, status);

/**
 * The invitation a link's key names, if an account can still be made from it; otherwise an error that says
 * why not (the page shows it to the person who followed the link).
 */
export function usableInvitation(state: RealmState, key: string, now: number): Invitation {
  const invitation = state.invitations.byKey.get(key);
  if (!invitation) throw linkError('This invitation link is not valid. Check that you copied the whole link.', 404);
  if (invitation.status === 'used') throw linkError('This invitation has already been used to create an account. Log in instead.');
  if (invitation.status === 'revoked') throw linkError('This invitation has been revoked. Ask for a new one.');
  if (invitation.expiresAt !== null && invitation.expiresAt * 1000 <= now) throw linkError('This invitation has expired. Ask for a new one.');
  // The address may have got its account another way since (POST /users, or another invitation's link).
  if (invitation.email !== null && findUserByEmail(state, invitation.email)) {
    throw linkError(`${invitation.email} already has an account in this organization. Log in instead.`);
  }
  return invitation;
}

/**
 * An account made from an invitation: the invited role, the invitation's channels (and the realm's default
 * ones if it said so), its groups that still exist. An email invitation is used up; a reusable link is not.
 * Channels and groups were checked against the inviter's rights when the invitation was made.
 */
export function decideAcceptInvitation(state: RealmState, command: Accept, clock: DecideContext): RealmChange[] {
  const invitation = usableInvitation(state, command.key, clock.now());
  const email = invitation.multiuse ? command.email : invitation.email;
  if (!email) throw new ChatError(ErrorCode.REQUEST_VARIABLE_MISSING, "Missing 'email' argument", 400, { var_name: 'email' });
  const refused = addressNotAllowed(state, email);
  if (refused === 'plus') throw badRequest('Email addresses containing + are not allowed in this organization.');
  if (refused) throw badRequest(`Your email address, ${email}, is not in one of the domains that are allowed to register for accounts in this organization.`);
  const channels = [...(invitation.includeRealmDefaultSubscriptions ? defaultChannelIds(state) : []), ...invitation.channelIds].filter(
    (id) => state.channels.has(id) && !state.channels.get(id)!.isArchived,
  );
  const changes = newUserChanges(state, { email, fullName: command.fullName, passwordHash: command.passwordHash, role: invitation.invitedAs }, channels, clock);
  const userId = state.nextUserId;
  for (const groupId of invitation.groupIds) {
    const group = state.groups.get(groupId);
    if (group && !group.deactivated) changes.push({ type: 'group.members_changed', id: groupId, add: [userId], remove: [] });
  }
  if (!invitation.multiuse) changes.push({ type: 'invitation.used', id: invitation.id });
  return changes;
}
