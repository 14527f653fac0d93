import type { Role } from '../state.ts';
import type { RealmState } from '../state.ts';
import { REALM_PERMISSION_DEFAULTS, systemGroupId, type RealmPermission } from '../permissions.ts';
import type { GroupChange } from './changes.ts';
import { SYSTEM_GROUPS, systemGroupNameOf, type GroupPermission, type GroupSetting, type UserGroup } from './state.ts';

/** A new realm's system groups and its permissions' defaults; deterministic, so replay makes the same ids. */
export function createSystemGroups(state: RealmState): void {
  for (const { name } of SYSTEM_GROUPS) {
    const id = state.nextGroupId++;
    state.groups.set(id, {
      id, name, description: '', members: new Set(), subgroups: new Set(), isSystemGroup: true, deactivated: false,
      creatorId: null, dateCreated: null, permissions: {} as Record<GroupPermission, GroupSetting>,
    });
    state.systemGroupIds.set(name, id);
  }
  const nobody = systemGroupId(state, 'role:nobody');
  for (const { name, subgroup } of SYSTEM_GROUPS) {
    const group = state.groups.get(systemGroupId(state, name))!;
    if (subgroup) group.subgroups.add(systemGroupId(state, subgroup));
    // System groups are managed by roles, not by anyone through the group endpoints.
    group.permissions = {
      can_add_members_group: nobody, can_join_group: nobody, can_leave_group: nobody,
      can_manage_group: nobody, can_mention_group: systemGroupId(state, 'role:everyone'), can_remove_members_group: nobody,
    };
  }
  for (const [permission, group] of Object.entries(REALM_PERMISSION_DEFAULTS)) {
    state.permissions[permission as RealmPermission] = systemGroupId(state, group);
  }
}

/** Keeps the role groups in step with a user's role. */
export function setRoleMembership(state: RealmState, userId: number, from: Role | null, to: Role): void {
  if (from !== null) state.groups.get(systemGroupId(state, systemGroupNameOf(from)))?.members.delete(userId);
  state.groups.get(systemGroupId(state, systemGroupNameOf(to)))?.members.add(userId);
}

export function applyGroupChange(state: RealmState, change: GroupChange): void {
  if (change.type === 'group.created') {
    const group: UserGroup = {
      id: change.id, name: change.name, description: change.description, members: new Set(change.members),
      subgroups: new Set(change.subgroups), isSystemGroup: false, deactivated: false, creatorId: change.creatorId,
      dateCreated: Math.floor(change.at / 1000), permissions: { ...change.permissions },
    };
    state.groups.set(group.id, group);
    state.nextGroupId = Math.max(state.nextGroupId, group.id + 1);
    return;
  }
  const group = state.groups.get(change.id);
  if (!group) return;
  switch (change.type) {
    case 'group.updated':
      if (change.name !== undefined) group.name = change.name;
      if (change.description !== undefined) group.description = change.description;
      if (change.deactivated !== undefined) group.deactivated = change.deactivated;
      Object.assign(group.permissions, change.permissions ?? {});
      return;
    case 'group.members_changed':
      for (const id of change.add) group.members.add(id);
      for (const id of change.remove) group.members.delete(id);
      return;
    case 'group.subgroups_changed':
      for (const id of change.add) group.subgroups.add(id);
      for (const id of change.remove) group.subgroups.delete(id);
      return;
  }
}
