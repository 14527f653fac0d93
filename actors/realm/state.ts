import {
  groupFromRecord,
  groupToRecord,
  type GroupSetting,
  type SystemGroupName,
  type UserGroup,
  type UserGroupRecord,
} from './groups/state.ts';
import type { RealmPermission } from './permissions.ts';

/** Role values of the Zulip API. Lower is more powerful. */
export const Role = {
  owner: 100,
  administrator: 200,
  moderator: 300,
  member: 400,
  guest: 600,
} as const;
export type Role = (typeof Role)[keyof typeof Role];
export const ROLE_VALUES: readonly Role[] = Object.values(Role);

export interface UserProfile {
  userId: number;
  /** the API email, unique in the realm */
  email: string;
  fullName: string;
  role: Role;
  isBot: boolean;
  isActive: boolean;
  apiKey: string;
  /** scrypt hash, or null for an account that cannot log in with a password */
  passwordHash: string | null;
  /** the server-level permission that POST /users needs on top of the administrator role */
  canCreateUsers: boolean;
  /** UNIX seconds */
  dateJoined: number;
  timezone: string;
  avatarVersion: number;
}

export interface RealmState {
  realmId: number;
  /** the subdomain; '' is the realm of the bare host */
  stringId: string;
  name: string;
  description: string;
  dateCreated: number;
  deactivated: boolean;
  users: Map<number, UserProfile>;
  /** index: lower-cased email -> user id */
  userIdByEmail: Map<string, number>;
  nextUserId: number;
  groups: Map<number, UserGroup>;
  systemGroupIds: Map<SystemGroupName, number>;
  nextGroupId: number;
  /** the realm's group-setting permissions (realm_can_*), see realm/permissions.ts */
  permissions: Record<RealmPermission, GroupSetting>;
}

/** What a realm snapshot stores: collections as arrays, indexes rebuilt on load. */
export type RealmRecord = Omit<RealmState, 'users' | 'userIdByEmail' | 'groups' | 'systemGroupIds'> & {
  users: UserProfile[];
  groups: UserGroupRecord[];
};

export function emptyRealm(realmId: number, stringId: string, name: string, dateCreated: number): RealmState {
  return {
    realmId,
    stringId,
    name,
    description: '',
    dateCreated,
    deactivated: false,
    users: new Map(),
    userIdByEmail: new Map(),
    nextUserId: 1,
    groups: new Map(),
    systemGroupIds: new Map(),
    nextGroupId: 1,
    permissions: {} as Record<RealmPermission, GroupSetting>,
  };
}

export function realmToRecord(state: RealmState): RealmRecord {
  const { users, userIdByEmail: _emails, groups, systemGroupIds: _system, ...rest } = state;
  return { ...rest, users: [...users.values()], groups: [...groups.values()].map(groupToRecord) };
}

export function realmFromRecord(record: RealmRecord): RealmState {
  const state: RealmState = { ...record, users: new Map(), userIdByEmail: new Map(), groups: new Map(), systemGroupIds: new Map() };
  for (const user of record.users) {
    state.users.set(user.userId, user);
    state.userIdByEmail.set(user.email.toLowerCase(), user.userId);
  }
  for (const group of record.groups) {
    state.groups.set(group.id, groupFromRecord(group));
    if (group.isSystemGroup) state.systemGroupIds.set(group.name as SystemGroupName, group.id);
  }
  return state;
}

export function findUserByEmail(state: RealmState, email: string): UserProfile | undefined {
  const id = state.userIdByEmail.get(email.toLowerCase());
  return id === undefined ? undefined : state.users.get(id);
}

export const isAdmin = (user: UserProfile) => user.role <= Role.administrator;

export function activeOwnerCount(state: RealmState): number {
  let count = 0;
  for (const user of state.users.values()) if (user.isActive && user.role === Role.owner && !user.isBot) count++;
  return count;
}
