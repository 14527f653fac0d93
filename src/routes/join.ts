import { badRequest, ChatError } from '../../actors/errors.ts';
import { NotPrimary } from '../../actors/replication.ts';
import { usableInvitation } from '../../actors/realm/invitations/accept.ts';
import type { Invitation } from '../../actors/realm/invitations/state.ts';
import type { RealmState } from '../../actors/realm/state.ts';
import { DirectResponse } from '../http/envelope.ts';
import type { ApiRequest } from '../http/request.ts';
import { p } from '../http/params.ts';
import { hashPassword, passwordWeakness } from '../passwords.ts';
import type { AppServices } from '../services.ts';
import { joinDonePage, joinErrorPage, joinFormPage } from '../web/join-page.ts';
import { botDomain } from './bots.ts';
import { route } from './route.ts';
import { emailSchema, fullNameSchema } from './users.ts';

/** Where an invitation's link leads: a page at the realm's root, the key its only credential. */
export const joinUrl = (services: AppServices, realm: RealmState, key: string) => `${services.realmUrl(realm)}/join/${key}/`;

interface JoinInput {
  fullName: string;
  password: string;
  /** a reusable link's account: the address the visitor chose (an email invitation's is fixed) */
  email: string | undefined;
}

/**
 * Makes the account an invitation's link offers. Everything cheap is checked first, the password hash is
 * made last; the realm decides again on the state as it then is (the link may have been used meanwhile).
 */
async function acceptInvitation(services: AppServices, realm: RealmState, request: ApiRequest, key: string, input: JoinInput) {
  const invitation = usableInvitation(realm, key, services.runtime.clock.now());
  // A reusable link makes accounts for whoever has it: each address may make a few. Counted before the
  // password is checked and hashed (the costly part), given back when no account comes of it.
  const giveBack = invitation.multiuse ? services.clientBudgets.linkJoin(request) : () => {};
  try {
    services.clientBudgets.costlyRequest();
    return await makeAccount(services, realm, key, invitation, input);
  } catch (error) {
    giveBack();
    throw error;
  }
}

async function makeAccount(services: AppServices, realm: RealmState, key: string, invitation: Invitation, input: JoinInput) {
  const fullName = fullNameSchema.safeParse(input.fullName);
  if (!fullName.success) throw badRequest(fullName.error.issues[0]?.message ?? 'Invalid full name');
  let email = invitation.email;
  if (invitation.multiuse) {
    const parsed = emailSchema.safeParse(input.email ?? '');
    if (!parsed.success) throw badRequest('Invalid email address');
    email = parsed.data;
  }
  const weakness = await passwordWeakness(input.password, [email!, fullName.data]);
  if (weakness) throw badRequest(weakness);
  const passwordHash = await services.passwordQueue.run('anonymous', () => hashPassword(input.password));
  const changes = await services.runtime.execute(realm.realmId, {
    type: 'invite.accept', key, email, fullName: fullName.data, passwordHash, botDomain: botDomain(services, realm),
  });
  const created = changes.find((change) => change.type === 'user.created');
  if (created?.type !== 'user.created') throw new Error('an accepted invitation made no account');
  return { user_id: created.user.userId, email: created.user.email, full_name: created.user.fullName };
}

/** Why the link cannot make an account now, or null when it can. */
function linkProblem(realm: RealmState, key: string, now: number): ChatError | null {
  try {
    usableInvitation(realm, key, now);
    return null;
  } catch (error) {
    if (error instanceof ChatError) return error;
    throw error;
  }
}

function html(status: number, body: string, extraHeaders: Record<string, string> = {}): DirectResponse {
  return new DirectResponse({
    status,
    headers: {
      ...extraHeaders,
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
      // The page runs no script and posts only to itself; the key in its URL must not leak to other sites.
      'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
      'Referrer-Policy': 'no-referrer',
    },
    body,
  });
}

const formParams = { key: p.string(), full_name: p.string().default(''), password: p.string().default(''), email: p.string().optional() };

export const joinRoutes = [
  // The page the invitation's mail links to: the form, or why the link cannot be used.
  route({
    method: 'GET',
    path: '/join/{key}',
    root: true,
    auth: 'public',
    params: { key: p.string() },
    handle({ services, realm }, { key }) {
      const problem = linkProblem(realm, key, services.runtime.clock.now());
      if (problem) return html(problem.status, joinErrorPage(problem.message));
      const invitation = realm.invitations.byKey.get(key)!;
      return html(200, joinFormPage({ realmName: realm.name, invitedEmail: invitation.email, values: { fullName: '', email: '' } }));
    },
  }),

  // The form posted back: the account, or the form again with what was wrong.
  route({
    method: 'POST',
    path: '/join/{key}',
    root: true,
    auth: 'public',
    params: formParams,
    async handle({ services, realm, request }, params) {
      const input = { fullName: params.full_name, password: params.password, email: params.email };
      try {
        const account = await acceptInvitation(services, realm, request, params.key, input);
        return html(200, joinDonePage(realm.name, services.realmUrl(realm), account.email));
      } catch (error) {
        // A write at a cluster's replica goes on to the primary (http/dispatch.ts).
        if (!(error instanceof ChatError) || error instanceof NotPrimary) throw error;
        // A link that cannot be used (any more) gets the error page; a form with a mistake comes back with it.
        const problem = linkProblem(realm, params.key, services.runtime.clock.now());
        if (problem) return html(problem.status, joinErrorPage(problem.message));
        const { email: invitedEmail } = realm.invitations.byKey.get(params.key)!;
        const values = { fullName: params.full_name, email: params.email ?? '' };
        // The error's headers too: a refusal over a budget says when to try again (Retry-After).
        return html(error.status, joinFormPage({ realmName: realm.name, invitedEmail, values, error: error.message }), error.headers);
      }
    },
  }),

  // The same as JSON, for clients and scripts: what the link offers, and the account made from it.
  route({
    method: 'GET',
    path: '/invites/join/{key}',
    auth: 'public',
    params: { key: p.string() },
    handle({ services, realm }, { key }) {
      const invitation = usableInvitation(realm, key, services.runtime.clock.now());
      return {
        realm_name: realm.name, realm_url: services.realmUrl(realm), email: invitation.email, is_multiuse: invitation.multiuse,
        invited_as: invitation.invitedAs, expiry_date: invitation.expiresAt,
      };
    },
  }),

  route({
    method: 'POST',
    path: '/invites/join/{key}',
    auth: 'public',
    params: { key: p.string(), full_name: p.string(), password: p.string(), email: p.string().optional() },
    handle: ({ services, realm, request }, params) =>
      acceptInvitation(services, realm, request, params.key, { fullName: params.full_name, password: params.password, email: params.email }),
  }),
];
