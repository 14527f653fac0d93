import { z } from 'zod';
import { badRequest, ChatError, ErrorCode } from '../../actors/errors.ts';
import type { RealmState, UserProfile } from '../../actors/realm/state.ts';
import { checkSettings, SETTINGS, type SettingSpec } from '../../actors/user/settings.ts';
import { p, type Param, type ParamsOf } from '../http/params.ts';
import { refuseOver } from '../http/rate-limit.ts';
import { checkPassword } from '../password-check.ts';
import { hashPassword, passwordWeakness } from '../passwords.ts';
import type { AppServices } from '../services.ts';
import { route, type RouteContext } from './route.ts';
import { emailSchema as email, fullNameSchema as fullName } from './users.ts';
import type { WireResponse } from '../../actors/wire/responses.ts';

/** A setting's request parameter, by the kind of its value (the realm's defaults for new users use it too). */
export function paramFor(spec: SettingSpec): Param<unknown, true> {
  if (spec.kind === 'bool') return p.bool().optional();
  if (spec.kind === 'int') return p.int(z.number().int()).optional();
  return p.string().optional();
}

const settingParams: Record<string, Param<unknown, true>> = Object.fromEntries(SETTINGS.map((spec) => [spec.name, paramFor(spec)]));

const params = {
  full_name: p.string(fullName).optional(),
  email: p.string(email).optional(),
  old_password: p.string().optional(),
  new_password: p.string().optional(),
  ...settingParams,
};

/** Verifies the old password and the new one's strength; returns the new hash. */
async function checkNewPassword(context: RouteContext<'user'>, oldPassword: string | undefined, newPassword: string): Promise<string> {
  const { services, realm, request, user } = context;
  if (oldPassword === undefined) {
    throw new ChatError(ErrorCode.REQUEST_VARIABLE_MISSING, "Missing 'old_password' argument", 400, { var_name: 'old_password' });
  }
  // The original checks the old password as a login, within the same failure budgets: an API key alone
  // must not be a way to try passwords (one that may open other services too).
  const account = { realmId: realm.realmId, username: user.email, stored: user.passwordHash };
  if (!(await checkPassword(services, request, 'user', account, oldPassword))) throw badRequest('Wrong password!');
  const weakness = await passwordWeakness(newPassword, [user.email, user.fullName]);
  if (weakness) throw badRequest(weakness);
  return services.passwordQueue.run('user', () => hashPassword(newPassword));
}

/**
 * Records the pending change (the user actor checks the address against the realm), then mails the
 * confirmation link to the new address. The address changes when the link's page
 * (/accounts/confirm_new_email/KEY, src/routes/accounts.ts) is opened.
 */
async function startEmailChange(services: AppServices, realm: RealmState, user: UserProfile, newEmail: string): Promise<void> {
  // Counted before the request is recorded (it replaces the pending one), given back when nothing is mailed.
  const limiter = services.emailChangeLimiter;
  const holder = `${realm.realmId}:${user.userId}`;
  if (limiter) refuseOver(limiter, limiter.hit(holder), 'Too many email address changes requested; try again later');
  let change;
  try {
    [change] = await services.runtime.executeUser(realm.realmId, user.userId, { type: 'email.request_change', newEmail, realm });
  } catch (error) {
    limiter?.refund(holder);
    throw error;
  }
  if (change?.type !== 'email.change_requested') {
    limiter?.refund(holder);
    return;
  }
  const url = services.realmUrl(realm);
  const link = `${url}/accounts/confirm_new_email/${change.pending.token}`;
  await services.mailer.send({
    to: newEmail,
    subject: `Verify your new email address for ${realm.name}`,
    text:
      `Hello ${user.fullName},\n\nWe received a request to change the email address of your account in ${realm.name} ` +
      `(${url}) from ${user.email} to ${newEmail}.\n\nTo confirm the change, follow this link:\n${link}\n\n` +
      `If you did not ask for this, ignore this email: nothing changes until the link is followed.\n`,
  });
}

/** The settings the request sent (the table's parameters are not in the declared type: they are generated). */
function requestedSettings(values: Record<string, unknown>): Record<string, unknown> {
  const requested: Record<string, unknown> = {};
  for (const spec of SETTINGS) if (values[spec.name] !== undefined) requested[spec.name] = values[spec.name];
  return requested;
}

/**
 * PATCH /settings: everything is checked before anything is committed, so a refused request changes nothing:
 * the settings and the password here, then the email change, which its actor checks as it records it. Then
 * the password, the name (realm actor) and the personal settings (user actor).
 */
async function updateSettings(context: RouteContext<'user'>, values: ParamsOf<typeof params>) {
  const { services, realm, user } = context;
  const requested = requestedSettings(values);
  const checked = checkSettings(requested);
  const passwordHash = values.new_password === undefined ? null : await checkNewPassword(context, values.old_password, values.new_password);
  const caller = { kind: 'user' as const, userId: user.userId };

  if (values.email !== undefined) await startEmailChange(services, realm, user, values.email);
  if (passwordHash !== null) await services.runtime.execute(realm.realmId, { type: 'user.change_password', caller, userId: user.userId, passwordHash });
  // The name and the time zone are in the user directory (the realm actor); the time zone is a setting too.
  const timezone = typeof requested.timezone === 'string' ? requested.timezone : undefined;
  if (values.full_name !== undefined || timezone !== undefined) {
    await services.runtime.execute(realm.realmId, { type: 'user.update', caller, userId: user.userId, fullName: values.full_name, timezone });
  }
  // The realm shows every user's addresses, so it keeps this setting beside the user's own copy.
  if (typeof checked.email_address_visibility === 'number') {
    await services.runtime.execute(realm.realmId, { type: 'user.set_email_visibility', userId: user.userId, visibility: checked.email_address_visibility });
  }
  if (Object.keys(requested).length > 0) {
    await services.runtime.executeUser(realm.realmId, user.userId, { type: 'settings.update', settings: requested });
  }
  return {} satisfies WireResponse<'/settings', 'patch'>;
}

// PATCH /settings/display and /settings/notifications are the deprecated aliases (feature level 80).
export const settingsRoutes = ['/settings', '/settings/display', '/settings/notifications'].map((path) =>
  route({ method: 'PATCH', path, auth: 'user', params, handle: updateSettings }),
);
