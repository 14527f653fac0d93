import { Role } from '../roles.ts';

/** A permission setting: a group's id, or an anonymous group of users and groups. */
export type GroupSetting = number | { direct_members: number[]; direct_subgroups: number[] };

export const GROUP_PERMISSIONS = [
  'can_add_members_group',
  'can_join_group',
  'can_leave_group',
  'can_manage_group',
  'can_mention_group',
  'can_remove_members_group',
] as const;
export type GroupPermission = (typeof GROUP_PERMISSIONS)[number];

export interface UserGroup {
  id: number;
  name: string;
  description: string;
  /** direct members; deactivated users stay here but are hidden from the API (feature level 303) */
  members: Set<number>;
  subgroups: Set<number>;
  isSystemGroup: boolean;
  deactivated: boolean;
  creatorId: number | null;
  dateCreated: number | null;
  permissions: Record<GroupPermission, GroupSetting>;
}

/**
 * The system groups that mirror roles, in the original server's nesting: each role's group holds the
 * users of exactly that role and, as a subgroup, the group of the next stronger role.
 */
export const SYSTEM_GROUPS = [
  { name: 'role:nobody', role: null, subgroup: null },
  { name: 'role:owners', role: Role.owner, subgroup: null },
  { name: 'role:administrators', role: Role.administrator, subgroup: 'role:owners' },
  { name: 'role:moderators', role: Role.moderator, subgroup: 'role:administrators' },
  { name: 'role:fullmembers', role: null, subgroup: 'role:members' },
  { name: 'role:members', role: Role.member, subgroup: 'role:moderators' },
  { name: 'role:everyone', role: Role.guest, subgroup: 'role:members' },
  { name: 'role:internet', role: null, subgroup: 'role:everyone' },
] as const;
export type SystemGroupName = (typeof SYSTEM_GROUPS)[number]['name'];

/** The group a role's users are direct members of. */
export function systemGroupNameOf(role: Role): SystemGroupName {
  const entry = SYSTEM_GROUPS.find((group) => group.role === role);
  return entry!.name;
}

export interface GroupIndex {
  groups: Map<number, UserGroup>;
  systemGroupIds: Map<SystemGroupName, number>;
}

/** Every group contained in `groupId`, itself included, following subgroups (cycles cannot exist). */
export function groupClosure(index: GroupIndex, groupId: number, out = new Set<number>()): Set<number> {
  if (out.has(groupId)) return out;
  out.add(groupId);
  for (const sub of index.groups.get(groupId)?.subgroups ?? []) groupClosure(index, sub, out);
  return out;
}

/** Is the user in the group setting, directly or through any subgroup? */
export function settingIncludes(index: GroupIndex, setting: GroupSetting, userId: number): boolean {
  const roots = typeof setting === 'number' ? [setting] : setting.direct_subgroups;
  if (typeof setting !== 'number' && setting.direct_members.includes(userId)) return true;
  for (const root of roots) {
    for (const id of groupClosure(index, root)) if (index.groups.get(id)?.members.has(userId)) return true;
  }
  return false;
}

/** A group as stored in a snapshot: sets as arrays. */
export type UserGroupRecord = Omit<UserGroup, 'members' | 'subgroups'> & { members: number[]; subgroups: number[] };

export const groupToRecord = (group: UserGroup): UserGroupRecord => ({ ...group, members: [...group.members], subgroups: [...group.subgroups] });

export const groupFromRecord = (record: UserGroupRecord): UserGroup => ({
  ...record,
  members: new Set(record.members),
  subgroups: new Set(record.subgroups),
});
