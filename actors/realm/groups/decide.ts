import { badRequest, ChatError, ErrorCode } from '../../errors.ts';
import type { Clock } from '../decide.ts';
import type { Caller } from '../commands.ts';
import { disallowedNameCharacter } from '../names.ts';
import { allowed, systemGroupId } from '../permissions.ts';
import type { RealmState } from '../state.ts';
import type { GroupChange } from './changes.ts';
import type { GroupCommand } from './commands.ts';
import { requireRealmRoom, type RealmLimits } from '../limits.ts';
import { GROUP_PERMISSIONS, groupClosure, settingIncludes, type GroupPermission, type GroupSetting, type UserGroup } from './state.ts';

const MAX_NAME_LENGTH = 100;
// As a channel's description: every registration carries every group's.
const MAX_DESCRIPTION_LENGTH = 1024;

export function decideGroup(state: RealmState, command: GroupCommand, clock: Clock, limits: RealmLimits): GroupChange[] {
  switch (command.type) {
    case 'group.create': {
      const callerId = userOf(command.caller);
      if (callerId !== null && !allowed(state, 'can_create_groups', callerId)) throw forbidden();
      checkName(state, command.name);
      checkDescription(command.description);
      // System groups and deactivated ones count: they are kept.
      requireRealmRoom('user groups', state.groups.size, limits.userGroups);
      for (const id of command.members) requireActiveUser(state, id);
      for (const id of command.subgroups) requireGroup(state, id);
      const creator = callerId ?? 0;
      const nobody = systemGroupId(state, 'role:nobody');
      const defaults: Record<GroupPermission, GroupSetting> = {
        can_add_members_group: nobody,
        can_join_group: nobody,
        can_leave_group: systemGroupId(state, 'role:everyone'),
        can_manage_group: { direct_members: callerId === null ? [] : [creator], direct_subgroups: [] },
        can_mention_group: systemGroupId(state, 'role:everyone'),
        can_remove_members_group: nobody,
      };
      for (const [name, value] of Object.entries(command.permissions)) checkSetting(state, name, value);
      return [{
        type: 'group.created', id: state.nextGroupId, name: command.name, description: command.description,
        members: unique(command.members), subgroups: unique(command.subgroups), creatorId: creator, at: clock.now(),
        permissions: { ...defaults, ...command.permissions },
      }];
    }
    case 'group.update': {
      const group = requireGroup(state, command.id, { allowDeactivated: true, allowSystem: false });
      requireManager(state, group, command.caller);
      const change: Extract<GroupChange, { type: 'group.updated' }> = { type: 'group.updated', id: group.id };
      if (command.name !== undefined && command.name !== group.name) {
        checkName(state, command.name);
        change.name = command.name;
      }
      if (command.description !== undefined && command.description !== group.description) change.description = checkDescription(command.description);
      if (command.deactivated !== undefined && command.deactivated !== group.deactivated) {
        if (command.deactivated) requireUnused(state, group);
        change.deactivated = command.deactivated;
      }
      for (const [name, edit] of Object.entries(command.permissions ?? {})) {
        if (!edit) continue;
        const key = name as GroupPermission;
        if (edit.old !== undefined && !sameSetting(edit.old, group.permissions[key])) {
          throw badRequest("'old' value does not match the expected value.");
        }
        checkSetting(state, key, edit.new);
        (change.permissions ??= {})[key] = edit.new;
      }
      // The original refuses only a request that names nothing to change; resending current values is a no-op.
      const given = command.name !== undefined || command.description !== undefined || command.deactivated !== undefined
        || Object.values(command.permissions ?? {}).some((edit) => edit !== undefined);
      if (!given) throw badRequest('No new data supplied');
      return Object.keys(change).length > 2 ? [change] : [];
    }
    case 'group.members':
      return decideMembers(state, command);
  }
}

function decideMembers(state: RealmState, command: Extract<GroupCommand, { type: 'group.members' }>): GroupChange[] {
  const group = requireGroup(state, command.id, { allowDeactivated: false, allowSystem: false });
  const callerId = userOf(command.caller);
  const manager = callerId === null || canManage(state, group, callerId);
  const may = (permission: GroupPermission) => manager || (callerId !== null && settingIncludes(state, group.permissions[permission], callerId));
  const joiningSelf = command.add.length === 1 && command.add[0] === callerId;
  const leavingSelf = command.remove.length === 1 && command.remove[0] === callerId;
  if (command.add.length && !(may('can_add_members_group') || (joiningSelf && may('can_join_group')))) throw forbidden();
  if (command.remove.length && !(may('can_remove_members_group') || (leavingSelf && may('can_leave_group')))) throw forbidden();
  if ((command.addSubgroups.length || command.removeSubgroups.length) && !manager) throw forbidden();
  for (const id of command.add) {
    requireActiveUser(state, id);
    if (group.members.has(id)) throw badRequest(`User ${id} is already a member of this group`);
  }
  for (const id of command.remove) if (!group.members.has(id)) throw badRequest(`There is no member '${id}' in this user group`);
  for (const id of command.addSubgroups) {
    requireGroup(state, id);
    if (group.subgroups.has(id)) throw badRequest(`User group ${id} is already a subgroup of this group.`);
    // A cycle would make membership infinite: the new subgroup must not contain this group.
    if (groupClosure(state, id).has(group.id)) throw badRequest('Adding these subgroups would create a cycle of groups.');
  }
  for (const id of command.removeSubgroups) if (!group.subgroups.has(id)) throw badRequest(`User group ${id} is not a subgroup of this group.`);
  const changes: GroupChange[] = [];
  if (command.add.length || command.remove.length) {
    changes.push({ type: 'group.members_changed', id: group.id, add: unique(command.add), remove: unique(command.remove) });
  }
  if (command.addSubgroups.length || command.removeSubgroups.length) {
    changes.push({ type: 'group.subgroups_changed', id: group.id, add: unique(command.addSubgroups), remove: unique(command.removeSubgroups) });
  }
  return changes;
}

const userOf = (caller: Caller) => (caller.kind === 'user' ? caller.userId : null);
const unique = (ids: number[]) => [...new Set(ids)];
const forbidden = () => new ChatError(ErrorCode.UNAUTHORIZED_PRINCIPAL, 'Insufficient permission');

/** May the user add members to the group (the check of POST /user_groups/{id}/members; invitations make it too)? */
export function mayAddMembers(state: RealmState, group: UserGroup, userId: number): boolean {
  return canManage(state, group, userId) || settingIncludes(state, group.permissions.can_add_members_group, userId);
}

function canManage(state: RealmState, group: UserGroup, userId: number): boolean {
  return allowed(state, 'can_manage_all_groups', userId) || settingIncludes(state, group.permissions.can_manage_group, userId);
}

function requireManager(state: RealmState, group: UserGroup, caller: Caller): void {
  const callerId = userOf(caller);
  if (callerId !== null && !canManage(state, group, callerId)) throw forbidden();
}

function checkDescription(description: string): string {
  if (description.length > MAX_DESCRIPTION_LENGTH) throw badRequest(`User group description cannot exceed ${MAX_DESCRIPTION_LENGTH} characters.`);
  return description;
}

function checkName(state: RealmState, name: string): void {
  const trimmed = name.trim();
  if (!trimmed) throw badRequest('User group name cannot be empty!');
  if (trimmed.length > MAX_NAME_LENGTH) throw badRequest(`User group name cannot exceed ${MAX_NAME_LENGTH} characters.`);
  if (disallowedNameCharacter(trimmed) >= 0) throw badRequest('Invalid characters in user group name.');
  if (/^(role:|@)/.test(trimmed)) throw badRequest(`User group name cannot start with '${trimmed.startsWith('@') ? '@' : 'role:'}'.`);
  for (const group of state.groups.values()) if (group.name === trimmed) throw badRequest(`User group '${trimmed}' already exists.`);
}

function requireActiveUser(state: RealmState, userId: number): void {
  const user = state.users.get(userId);
  if (!user || !user.isActive) throw badRequest(`Invalid user ID: ${userId}`);
}

function requireGroup(state: RealmState, id: number, options = { allowDeactivated: false, allowSystem: true }): UserGroup {
  const group = state.groups.get(id);
  if (!group || (group.deactivated && !options.allowDeactivated)) throw badRequest(`Invalid user group ID: ${id}`);
  if (group.isSystemGroup && !options.allowSystem) throw badRequest('Cannot modify a system group.');
  return group;
}

function checkSetting(state: RealmState, name: string, value: GroupSetting): void {
  if (!(GROUP_PERMISSIONS as readonly string[]).includes(name)) throw badRequest(`Invalid permission setting: ${name}`);
  if (typeof value === 'number') {
    requireGroup(state, value);
    return;
  }
  for (const id of value.direct_members) requireActiveUser(state, id);
  for (const id of value.direct_subgroups) requireGroup(state, id);
}

function sameSetting(a: GroupSetting, b: GroupSetting): boolean {
  if (typeof a === 'number' || typeof b === 'number') return a === b;
  const sorted = (ids: number[]) => [...ids].sort((x, y) => x - y).join(',');
  return sorted(a.direct_members) === sorted(b.direct_members) && sorted(a.direct_subgroups) === sorted(b.direct_subgroups);
}

/** A group named by any permission setting cannot be deactivated: the setting would point at nothing. */
function requireUnused(state: RealmState, group: UserGroup): void {
  const uses = (setting: GroupSetting) =>
    setting === group.id || (typeof setting !== 'number' && setting.direct_subgroups.includes(group.id));
  const objections: { type: string; settings: string[]; group_id?: number }[] = [];
  const realmSettings = Object.entries(state.permissions).filter(([, value]) => uses(value)).map(([name]) => name);
  if (realmSettings.length) objections.push({ type: 'realm', settings: realmSettings });
  for (const other of state.groups.values()) {
    if (other.id === group.id || other.deactivated) continue;
    const settings = Object.entries(other.permissions).filter(([, value]) => uses(value)).map(([name]) => name);
    if (settings.length) objections.push({ type: 'user_group', group_id: other.id, settings });
  }
  if (objections.length) {
    throw new ChatError(ErrorCode.CANNOT_DEACTIVATE_GROUP_IN_USE, 'Cannot deactivate user group in use.', 400, { objections });
  }
}
