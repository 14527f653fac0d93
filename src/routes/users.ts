import { z } from 'zod';
import { badRequest, ChatError, ErrorCode, notAdmin } from '../../actors/errors.ts';
import { fullNameProblem } from '../../actors/realm/names.ts';
import { isAdmin, ROLE_VALUES, type RealmState, type Role, type UserProfile } from '../../actors/realm/state.ts';
import { profileDataOf } from '../../actors/realm/profile-fields/views.ts';
import { accessFilter, findAccessibleUser, hiddenBy, unknownUserView } from '../../actors/realm/user-access.ts';
import { newestReadableId, prepareNewestReadable } from '../../actors/realm/messages/access.ts';
import { personView } from '../../actors/realm/views.ts';
import { addressesFor } from '../../actors/realm/email-visibility.ts';
import { userDirectoryJson } from '../../actors/realm/user-directory.ts';
import { RawFields, SharedFields } from '../http/envelope.ts';
import { p } from '../http/params.ts';
import { hashPassword, passwordWeakness } from '../passwords.ts';
import { profileDataParam } from './profile-fields.ts';
import { changeOf } from './change-of.ts';
import { route } from './route.ts';
import type { WireResponse } from '../../actors/wire/responses.ts';

// The realm's rule (realm/names.ts), checked here too so that a form can show it beside the field.
const fullName = z
  .string()
  .transform((name) => name.trim())
  .superRefine((name, context) => {
    const problem = fullNameProblem(name);
    if (problem) context.addIssue({ code: 'custom', message: problem });
  });
const email = z.string().trim().pipe(z.email('Invalid email address'));

/** The rules for a new account's name and address (accounts made from invitations follow them too). */
export { fullName as fullNameSchema, email as emailSchema };
const role = z.literal(ROLE_VALUES as [Role, ...Role[]], { error: 'Invalid role' });
const userId = p.int(z.number().int().positive());

/**
 * A user by id or by email, as the caller may see them: deactivated users are included, as in the original;
 * a user a limited guest may not access is not found (realm/user-access.ts).
 */
export function lookUp(realm: RealmState, viewer: UserProfile, idOrEmail: string): UserProfile {
  const user = findAccessibleUser(realm, viewer.userId, idOrEmail);
  if (!user) throw badRequest('No such user');
  return user;
}

function requireUserCreator(user: UserProfile): void {
  if (!isAdmin(user)) throw notAdmin();
  if (!user.canCreateUsers) throw new ChatError(ErrorCode.UNAUTHORIZED_PRINCIPAL, 'User not authorized to create users');
}

const caller = (user: UserProfile) => ({ kind: 'user' as const, userId: user.userId });

/** GET /users answers encoded once per shared user list (user-directory.ts), dropped with it. */
const sharedAnswers = new WeakMap<object, SharedFields>();

export const userRoutes = [
  route({
    method: 'GET',
    path: '/users',
    auth: 'user',
    params: {
      client_extavatar: p.bool().default(true),
      include_custom_profile_fields: p.bool().default(false),
      user_ids: p.json(z.array(z.number().int())).optional(),
    },
    handle({ realm, user: viewer }, params) {
      // A limited guest gets the users it may not access as placeholders, as the original does.
      const accessible = accessFilter(realm, viewer.userId);
      if (!params.user_ids && accessible === null) {
        const list = userDirectoryJson(realm, viewer, params.client_extavatar, params.include_custom_profile_fields);
        if (!list.shared) return new RawFields(`"members":${list.json}`);
        let answer = sharedAnswers.get(list.shared);
        if (!answer) sharedAnswers.set(list.shared, (answer = new SharedFields(`"members":${list.json}`)));
        return answer;
      }
      const users = params.user_ids ? params.user_ids.map((id) => realm.users.get(id)) : realm.users.values();
      const members = [];
      for (const user of users) {
        if (!user) continue;
        if (hiddenBy(accessible, user)) members.push(unknownUserView(user.userId));
        else members.push(personView(user, addressesFor(realm, viewer.userId, user), params.client_extavatar, params.include_custom_profile_fields ? profileDataOf(realm.profileFields, user.userId) : null));
      }
      return { members } satisfies WireResponse<'/users', 'get'>;
    },
  }),

  route({
    method: 'GET',
    path: '/users/me',
    auth: 'user',
    params: {},
    async handle({ services, realm: asked, user: caller }) {
      // `max_message_id` (deprecated, as in registration) is still sent by the original's get_profile_backend:
      // a member of many channels has their newest ids read a slice a turn first.
      const ready = prepareNewestReadable(asked, caller.userId);
      if (ready) await ready;
      const realm = services.runtime.realmState(asked.realmId);
      const user = realm.users.get(caller.userId) ?? caller;
      const profile_data = profileDataOf(realm.profileFields, user.userId);
      const person = personView(user, addressesFor(realm, user.userId, user), false, profile_data);
      // Without client_extavatar every user has an avatar URL, and a user always has their own address.
      return { ...person, avatar_url: person.avatar_url!, delivery_email: user.email, profile_data, max_message_id: newestReadableId(realm, user.userId) } satisfies WireResponse<'/users/me', 'get'>;
    },
  }),

  route({
    method: 'DELETE',
    path: '/users/me',
    auth: 'user',
    params: {},
    async handle({ services, realm, user }) {
      await services.runtime.execute(realm.realmId, { type: 'user.deactivate_own', userId: user.userId });
      return {} satisfies WireResponse<'/users/me', 'delete'>;
    },
  }),

  route({
    method: 'GET',
    path: '/users/{user_id}',
    auth: 'user',
    params: {
      user_id: p.string(),
      client_extavatar: p.bool().default(true),
      include_custom_profile_fields: p.bool().default(false),
    },
    handle({ realm, user }, params) {
      const target = lookUp(realm, user, params.user_id);
      return { user: personView(target, addressesFor(realm, user.userId, target), params.client_extavatar, params.include_custom_profile_fields ? profileDataOf(realm.profileFields, target.userId) : null) } satisfies WireResponse<'/users/{user_id}', 'get'> & WireResponse<'/users/{email}', 'get'>;
    },
  }),

  route({
    method: 'POST',
    path: '/users',
    auth: 'user',
    params: { email: p.string(email), password: p.string(), full_name: p.string(fullName) },
    authorize: requireUserCreator,
    async handle({ services, realm, user }, params) {
      const weakness = await passwordWeakness(params.password, [params.email, params.full_name]);
      if (weakness) throw badRequest(weakness);
      const changes = await services.runtime.execute(realm.realmId, {
        type: 'user.create',
        caller: caller(user),
        email: params.email,
        fullName: params.full_name,
        passwordHash: await services.passwordQueue.run('user', () => hashPassword(params.password)),
      });
      return { user_id: changeOf(changes, 'user.created').user.userId } satisfies WireResponse<'/users', 'post'>;
    },
  }),

  route({
    method: 'DELETE',
    path: '/users/{user_id}',
    auth: 'user',
    params: { user_id: userId, deactivation_notification_comment: p.string().optional() },
    async handle({ services, realm, user }, params) {
      await services.runtime.execute(realm.realmId, { type: 'user.deactivate', caller: caller(user), userId: params.user_id });
      const comment = params.deactivation_notification_comment;
      if (comment !== undefined) {
        const target = realm.users.get(params.user_id)!;
        const note = comment.trim() ? `\n\nA note from ${user.fullName}:\n\n${comment}` : '';
        await services.mailer.send({
          to: target.email,
          subject: `Your account in ${realm.name} has been deactivated`,
          text: `Hello ${target.fullName},\n\n${user.fullName} has deactivated your account in ${realm.name} (${services.realmUrl(realm)}).${note}\n`,
        });
      }
      return {} satisfies WireResponse<'/users/{user_id}', 'delete'>;
    },
  }),

  route({
    method: 'POST',
    path: '/users/{user_id}/reactivate',
    auth: 'user',
    params: { user_id: userId },
    async handle({ services, realm, user }, params) {
      await services.runtime.execute(realm.realmId, { type: 'user.reactivate', caller: caller(user), userId: params.user_id });
      return {} satisfies WireResponse<'/users/{user_id}/reactivate', 'post'>;
    },
  }),

  route({
    method: 'PATCH',
    path: '/users/{user_id}',
    auth: 'user',
    params: {
      user_id: p.string(), full_name: p.string(fullName).optional(), role: p.int(role).optional(), profile_data: profileDataParam.optional(),
      new_email: p.string(email).optional(),
    },
    async handle({ services, realm, user }, params) {
      const target = lookUp(realm, user, params.user_id);
      if (params.new_email !== undefined) {
        await services.runtime.execute(realm.realmId, { type: 'user.change_email', caller: caller(user), userId: target.userId, email: params.new_email, administered: true });
      }
      if (params.profile_data) {
        // An empty value (or null) clears the field, as in the original. Checked before the name and role change.
        const clears = (value: unknown) => value === null || value === '' || (Array.isArray(value) && value.length === 0);
        await services.runtime.execute(realm.realmId, {
          type: 'profile_data.update', caller: caller(user), userId: target.userId,
          set: params.profile_data.filter(({ value }) => !clears(value)), remove: params.profile_data.filter(({ value }) => clears(value)).map(({ id }) => id),
        });
      }
      await services.runtime.execute(realm.realmId, {
        type: 'user.update',
        caller: caller(user),
        userId: target.userId,
        ...(params.full_name !== undefined && { fullName: params.full_name }),
        ...(params.role !== undefined && { role: params.role }),
      });
      return {} satisfies WireResponse<'/users/{user_id}', 'patch'> & WireResponse<'/users/{email}', 'patch'>;
    },
  }),
];
