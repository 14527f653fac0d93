import { z } from 'zod';
import { badRequest } from '../../actors/errors.ts';
import { findAccessibleUser } from '../../actors/realm/user-access.ts';
import { GROUP_PERMISSIONS, groupClosure, type GroupPermission, type GroupSetting, type UserGroup } from '../../actors/realm/groups/state.ts';
import { activeMembers, groupView } from '../../actors/realm/groups/views.ts';
import type { RealmState } from '../../actors/realm/state.ts';
import { p, type Param } from '../http/params.ts';
import { changeOf } from './change-of.ts';
import { route } from './route.ts';
import type { WireResponse } from '../../actors/wire/responses.ts';

const ids = z.array(z.number().int());
const groupSetting: z.ZodType<GroupSetting> = z.union([
  z.number().int(),
  z.object({ direct_members: ids, direct_subgroups: ids }),
]);
const settingEdit = z.object({ new: groupSetting, old: groupSetting.optional() });
const groupId = p.int(z.number().int());

function permissionParams<T>(schema: z.ZodType<T>): Record<GroupPermission, Param<T, true>> {
  return Object.fromEntries(GROUP_PERMISSIONS.map((name) => [name, p.json(schema).optional()])) as Record<GroupPermission, Param<T, true>>;
}

function pickPermissions<T>(params: Partial<Record<GroupPermission, T | undefined>>): Partial<Record<GroupPermission, T>> {
  const out: Partial<Record<GroupPermission, T>> = {};
  for (const name of GROUP_PERMISSIONS) if (params[name] !== undefined) out[name] = params[name];
  return out;
}

function findGroup(realm: RealmState, id: number): UserGroup {
  const group = realm.groups.get(id);
  if (!group) throw badRequest('Invalid user group');
  return group;
}

/** Every member of a group, through its subgroups; deactivated users left out. */
function allMembers(realm: RealmState, group: UserGroup): number[] {
  const out = new Set<number>();
  for (const id of groupClosure(realm, group.id)) for (const member of activeMembers(realm, realm.groups.get(id)!)) out.add(member);
  return [...out].sort((a, b) => a - b);
}

const caller = (userId: number) => ({ kind: 'user' as const, userId });

export const userGroupRoutes = [
  route({
    method: 'POST',
    path: '/user_groups/create',
    auth: 'user',
    params: {
      name: p.string(),
      description: p.string(),
      members: p.json(ids),
      subgroups: p.json(ids).default([]),
      ...permissionParams(groupSetting),
    },
    async handle({ services, realm, user }, params) {
      const changes = await services.runtime.execute(realm.realmId, {
        type: 'group.create', caller: caller(user.userId), name: params.name.trim(), description: params.description,
        members: params.members, subgroups: params.subgroups, permissions: pickPermissions(params),
      });
      return { group_id: changeOf(changes, 'group.created').id } satisfies WireResponse<'/user_groups/create', 'post'>;
    },
  }),

  route({
    method: 'GET',
    path: '/user_groups',
    auth: 'user',
    params: { include_deactivated_groups: p.bool().default(false) },
    handle({ realm }, { include_deactivated_groups }) {
      const groups = [...realm.groups.values()].filter((group) => include_deactivated_groups || !group.deactivated);
      return { user_groups: groups.map((group) => groupView(realm, group)) } satisfies WireResponse<'/user_groups', 'get'>;
    },
  }),

  route({
    method: 'PATCH',
    path: '/user_groups/{user_group_id}',
    auth: 'user',
    params: {
      user_group_id: groupId,
      name: p.string().optional(),
      description: p.string().optional(),
      deactivated: p.bool().optional(),
      ...permissionParams(settingEdit),
    },
    async handle({ services, realm, user }, params) {
      if (params.deactivated === true) throw badRequest('Use the deactivate endpoint to deactivate a group.');
      await services.runtime.execute(realm.realmId, {
        type: 'group.update', caller: caller(user.userId), id: params.user_group_id, name: params.name?.trim(),
        description: params.description, deactivated: params.deactivated, permissions: pickPermissions(params),
      });
      return {} satisfies WireResponse<'/user_groups/{user_group_id}', 'patch'>;
    },
  }),

  route({
    method: 'POST',
    path: '/user_groups/{user_group_id}/deactivate',
    auth: 'user',
    params: { user_group_id: groupId },
    async handle({ services, realm, user }, params) {
      await services.runtime.execute(realm.realmId, {
        type: 'group.update', caller: caller(user.userId), id: params.user_group_id, deactivated: true,
      });
      return {} satisfies WireResponse<'/user_groups/{user_group_id}/deactivate', 'post'>;
    },
  }),

  route({
    method: 'POST',
    path: '/user_groups/{user_group_id}/members',
    auth: 'user',
    params: {
      user_group_id: groupId,
      add: p.json(ids).default([]),
      delete: p.json(ids).default([]),
      add_subgroups: p.json(ids).default([]),
      delete_subgroups: p.json(ids).default([]),
    },
    async handle({ services, realm, user }, params) {
      await services.runtime.execute(realm.realmId, {
        type: 'group.members', caller: caller(user.userId), id: params.user_group_id, add: params.add, remove: params.delete,
        addSubgroups: params.add_subgroups, removeSubgroups: params.delete_subgroups,
      });
      return {} satisfies WireResponse<'/user_groups/{user_group_id}/members', 'post'>;
    },
  }),

  route({
    method: 'POST',
    path: '/user_groups/{user_group_id}/subgroups',
    auth: 'user',
    params: { user_group_id: groupId, add: p.json(ids).default([]), delete: p.json(ids).default([]) },
    async handle({ services, realm, user }, params) {
      await services.runtime.execute(realm.realmId, {
        type: 'group.members', caller: caller(user.userId), id: params.user_group_id, add: [], remove: [],
        addSubgroups: params.add, removeSubgroups: params.delete,
      });
      return {} satisfies WireResponse<'/user_groups/{user_group_id}/subgroups', 'post'>;
    },
  }),

  route({
    method: 'GET',
    path: '/user_groups/{user_group_id}/members',
    auth: 'user',
    params: { user_group_id: groupId, direct_member_only: p.bool().default(false) },
    handle({ realm }, params) {
      const group = findGroup(realm, params.user_group_id);
      return { members: params.direct_member_only ? activeMembers(realm, group) : allMembers(realm, group) } satisfies WireResponse<'/user_groups/{user_group_id}/members', 'get'>;
    },
  }),

  route({
    method: 'GET',
    path: '/user_groups/{user_group_id}/members/{user_id}',
    auth: 'user',
    params: { user_group_id: groupId, user_id: p.int(z.number().int()), direct_member_only: p.bool().default(false) },
    handle({ realm, user }, params) {
      const group = findGroup(realm, params.user_group_id);
      const target = findAccessibleUser(realm, user.userId, params.user_id);
      if (!target || !target.isActive) throw badRequest('No such user');
      const members = params.direct_member_only ? activeMembers(realm, group) : allMembers(realm, group);
      return { is_user_group_member: members.includes(params.user_id) } satisfies WireResponse<'/user_groups/{user_group_id}/members/{user_id}', 'get'>;
    },
  }),

  route({
    method: 'GET',
    path: '/user_groups/{user_group_id}/subgroups',
    auth: 'user',
    params: { user_group_id: groupId, direct_subgroup_only: p.bool().default(false) },
    handle({ realm }, params) {
      const group = findGroup(realm, params.user_group_id);
      const subgroups = params.direct_subgroup_only ? [...group.subgroups] : [...groupClosure(realm, group.id)].filter((id) => id !== group.id);
      return { subgroups: subgroups.sort((a, b) => a - b) } satisfies WireResponse<'/user_groups/{user_group_id}/subgroups', 'get'>;
    },
  }),
];
