import { z } from 'zod';
import { notAdmin } from '../../actors/errors.ts';
import { fieldsView } from '../../actors/realm/profile-fields/views.ts';
import { isAdmin, type UserProfile } from '../../actors/realm/state.ts';
import { p } from '../http/params.ts';
import { changeOf } from './change-of.ts';
import { route } from './route.ts';
import type { WireResponse } from '../../actors/wire/responses.ts';

const fieldId = p.int(z.number().int());
const requireAdmin = (user: UserProfile) => {
  if (!isAdmin(user)) throw notAdmin();
};
const caller = (user: UserProfile) => ({ kind: 'user' as const, userId: user.userId });

/** `[{id, value}]`: a value is text, or a list of user ids for a person picker; the field's type decides. */
const profileData = p.json(z.array(z.object({ id: z.number().int(), value: z.unknown() })));

export const profileFieldRoutes = [
  route({
    method: 'GET',
    path: '/realm/profile_fields',
    auth: 'user',
    params: {},
    handle({ realm }) {
      return { custom_fields: fieldsView(realm.profileFields) } satisfies WireResponse<'/realm/profile_fields', 'get'>;
    },
  }),

  route({
    method: 'POST',
    path: '/realm/profile_fields',
    auth: 'user',
    authorize: requireAdmin,
    params: {
      name: p.string().default(''),
      hint: p.string().default(''),
      field_type: p.int(z.number().int()),
      field_data: p.json(z.unknown()).optional(),
      display_in_profile_summary: p.bool().default(false),
      required: p.bool().default(false),
      editable_by_user: p.bool().default(true),
    },
    async handle({ services, realm, user }, params) {
      const changes = await services.runtime.execute(realm.realmId, {
        type: 'profile_field.create', caller: caller(user), name: params.name, hint: params.hint, fieldType: params.field_type,
        fieldData: params.field_data ?? {}, displayInProfileSummary: params.display_in_profile_summary, required: params.required,
        editableByUser: params.editable_by_user,
      });
      return { id: changeOf(changes, 'profile_field.created').field.id } satisfies WireResponse<'/realm/profile_fields', 'post'>;
    },
  }),

  route({
    method: 'PATCH',
    path: '/realm/profile_fields',
    auth: 'user',
    authorize: requireAdmin,
    params: { order: p.json(z.array(z.number().int())) },
    async handle({ services, realm, user }, params) {
      await services.runtime.execute(realm.realmId, { type: 'profile_field.reorder', caller: caller(user), order: params.order });
      return {} satisfies WireResponse<'/realm/profile_fields', 'patch'>;
    },
  }),

  route({
    method: 'PATCH',
    path: '/realm/profile_fields/{field_id}',
    auth: 'user',
    authorize: requireAdmin,
    params: {
      field_id: fieldId,
      name: p.string().optional(),
      hint: p.string().optional(),
      field_data: p.json(z.unknown()).optional(),
      display_in_profile_summary: p.bool().optional(),
      required: p.bool().optional(),
      editable_by_user: p.bool().optional(),
    },
    async handle({ services, realm, user }, params) {
      await services.runtime.execute(realm.realmId, {
        type: 'profile_field.update', caller: caller(user), id: params.field_id, name: params.name, hint: params.hint, fieldData: params.field_data,
        displayInProfileSummary: params.display_in_profile_summary, required: params.required, editableByUser: params.editable_by_user,
      });
      return {};
    },
  }),

  route({
    method: 'DELETE',
    path: '/realm/profile_fields/{field_id}',
    auth: 'user',
    authorize: requireAdmin,
    params: { field_id: fieldId },
    async handle({ services, realm, user }, params) {
      await services.runtime.execute(realm.realmId, { type: 'profile_field.delete', caller: caller(user), id: params.field_id });
      return {};
    },
  }),

  route({
    method: 'PATCH',
    path: '/users/me/profile_data',
    auth: 'user',
    params: { data: profileData },
    async handle({ services, realm, user }, params) {
      await services.runtime.execute(realm.realmId, {
        type: 'profile_data.update', caller: caller(user), userId: user.userId, set: params.data.map(({ id, value }) => ({ id, value })), remove: [],
      });
      return {};
    },
  }),

  route({
    method: 'DELETE',
    path: '/users/me/profile_data',
    auth: 'user',
    params: { data: p.json(z.array(z.number().int())) },
    async handle({ services, realm, user }, params) {
      await services.runtime.execute(realm.realmId, { type: 'profile_data.update', caller: caller(user), userId: user.userId, set: [], remove: params.data });
      return {};
    },
  }),
];

export { profileData as profileDataParam };
