import { z } from 'zod';
import { badRequest } from '../../actors/errors.ts';
import { insufficientPermission, invitationFailed, skippedInvitees, type SkippedInvitee } from '../../actors/realm/invitations/decide.ts';
import type { Invitation } from '../../actors/realm/invitations/state.ts';
import { invitationView, visibleInvitations } from '../../actors/realm/invitations/views.ts';
import { allowed } from '../../actors/realm/permissions.ts';
import { Role, ROLE_VALUES, type RealmState, type UserProfile } from '../../actors/realm/state.ts';
import { p } from '../http/params.ts';
import type { AppServices } from '../services.ts';
import { joinUrl } from './join.ts';
import { route } from './route.ts';
import { emailSchema } from './users.ts';
import type { WireResponse } from '../../actors/wire/responses.ts';

/** The original's default validity of an invitation (its INVITATION_LINK_VALIDITY_MINUTES): ten days. */
const DEFAULT_VALIDITY_MINUTES = 10 * 24 * 60;

const caller = (user: UserProfile) => ({ kind: 'user' as const, userId: user.userId });
const ids = p.json(z.array(z.number().int()));
const inviteId = p.int(z.number().int());

/** The parameters of both kinds of invitation: what the account made from it gets, and when it expires. */
const termParams = {
  /** JSON: a number of minutes, or null for never */
  invite_expires_in_minutes: p.json(z.number().int().nullable()).default(DEFAULT_VALIDITY_MINUTES),
  invite_as: p.int(z.number().int().refine((role) => ROLE_VALUES.includes(role as Role), 'not a role')).default(Role.member),
  group_ids: ids.default([]),
  include_realm_default_subscriptions: p.bool().default(false),
};

type TermValues = { invite_expires_in_minutes: number | null; invite_as: number; group_ids: number[]; include_realm_default_subscriptions: boolean; stream_ids: number[] };

const terms = (params: TermValues) => ({
  expiresInMinutes: params.invite_expires_in_minutes,
  invitedAs: params.invite_as as Role,
  channelIds: params.stream_ids,
  groupIds: params.group_ids,
  includeRealmDefaultSubscriptions: params.include_realm_default_subscriptions,
});

/** The addresses of `invitee_emails`: separated by commas or newlines, as the original reads them. */
function inviteeEmails(text: string): string[] {
  const emails = text.split(/[,\n]/).map((email) => email.trim()).filter((email) => email.length > 0);
  if (emails.length === 0) throw badRequest('You must specify at least one email address.');
  const invalid = emails.filter((email) => !emailSchema.safeParse(email).success);
  if (invalid.length) {
    const errors = invalid.map((email): SkippedInvitee => [email, 'Invalid address.', false]);
    throw invitationFailed("Some emails did not validate, so we didn't send any invitations.", errors, false);
  }
  return emails;
}

/**
 * Mails each invitation its link. A mail that cannot be sent is logged, not answered with an error: the
 * invitations are made, and GET /invites lists them for a resend (the original sends its mail from a queue too).
 */
async function mailInvitations(services: AppServices, realm: RealmState, inviter: UserProfile, invitations: readonly Invitation[]): Promise<void> {
  for (const invitation of invitations) {
    const link = joinUrl(services, realm, invitation.key);
    const expiry = invitation.expiresAt === null ? 'It does not expire.' : `It expires on ${new Date(invitation.expiresAt * 1000).toUTCString()}.`;
    try {
      await services.mailer.send({
        to: invitation.email!,
        subject: `${inviter.fullName} invited you to join ${realm.name}`,
        text:
          `Hello,\n\n${inviter.fullName} (${inviter.email}) invited you to join ${realm.name} (${services.realmUrl(realm)}).\n\n` +
          `To create your account, follow this link and choose your name and password:\n${link}\n\n${expiry}\n`,
      });
    } catch (error) {
      services.log.error({ err: error, invitation: invitation.id }, 'an invitation mail could not be sent');
    }
  }
}

const createdInvitations = (changes: Awaited<ReturnType<AppServices['runtime']['execute']>>) =>
  changes.flatMap((change) => (change.type === 'invitations.created' ? change.invitations : []));

export const inviteRoutes = [
  route({
    method: 'POST',
    path: '/invites',
    auth: 'user',
    authorize(user, realm) {
      if (!allowed(realm, 'can_invite_users_group', user.userId)) throw insufficientPermission();
    },
    params: { invitee_emails: p.string(), stream_ids: ids, notify_referrer_on_join: p.bool().default(true), ...termParams },
    async handle({ services, realm, user }, params) {
      const emails = inviteeEmails(params.invitee_emails);
      // Read before the command, with no await between: the realm decides on this very state.
      const skipped = skippedInvitees(realm, emails);
      const changes = await services.runtime.execute(realm.realmId, {
        type: 'invite.send', caller: caller(user), emails, notifyReferrerOnJoin: params.notify_referrer_on_join, dailyLimit: services.config.invitationsPerDay, ...terms(params),
      });
      await mailInvitations(services, realm, user, createdInvitations(changes));
      if (skipped.length) {
        throw invitationFailed(
          "Some of those addresses already have an account, so we didn't send them an invitation. We did send invitations to everyone else!",
          skipped,
          true,
        );
      }
      return {} satisfies WireResponse<'/invites', 'post'>;
    },
  }),

  route({
    method: 'GET',
    path: '/invites',
    auth: 'user',
    params: {},
    handle({ services, realm, user }) {
      const invitations = visibleInvitations(realm, user, services.runtime.clock.now());
      return { invites: invitations.map((invitation) => invitationView(invitation, (key) => joinUrl(services, realm, key))) } satisfies WireResponse<'/invites', 'get'>;
    },
  }),

  route({
    method: 'POST',
    path: '/invites/multiuse',
    auth: 'user',
    authorize(user, realm) {
      if (!allowed(realm, 'create_multiuse_invite_group', user.userId)) throw insufficientPermission();
    },
    params: { stream_ids: ids.default([]), ...termParams },
    async handle({ services, realm, user }, params) {
      const changes = await services.runtime.execute(realm.realmId, { type: 'invite.create_link', caller: caller(user), ...terms(params) });
      const [link] = createdInvitations(changes);
      return { invite_link: joinUrl(services, realm, link!.key) } satisfies WireResponse<'/invites/multiuse', 'post'>;
    },
  }),

  // Revoking an email invitation, or a reusable link: the two kinds count their ids apart.
  ...([['/invites/{invite_id}', false], ['/invites/multiuse/{invite_id}', true]] as const).map(([path, multiuse]) =>
    route({
      method: 'DELETE',
      path,
      auth: 'user',
      params: { invite_id: inviteId },
      async handle({ services, realm, user }, params) {
        await services.runtime.execute(realm.realmId, { type: 'invite.revoke', caller: caller(user), id: params.invite_id, multiuse });
        return {} satisfies WireResponse<typeof path, 'delete'>;
      },
    }),
  ),

  route({
    method: 'POST',
    path: '/invites/{invite_id}/resend',
    auth: 'user',
    params: { invite_id: inviteId },
    async handle({ services, realm, user }, params) {
      await services.runtime.execute(realm.realmId, { type: 'invite.resend', caller: caller(user), id: params.invite_id, dailyLimit: services.config.invitationsPerDay });
      const invitation = realm.invitations.emails.get(params.invite_id)!;
      await mailInvitations(services, realm, realm.users.get(invitation.invitedBy) ?? user, [invitation]);
      return {} satisfies WireResponse<'/invites/{invite_id}/resend', 'post'>;
    },
  }),
];
