import type { GroupPermission, GroupSetting } from './state.ts';

/** Facts about user groups; every id and time is filled in. */
export type GroupChange =
  | {
      type: 'group.created';
      id: number;
      name: string;
      description: string;
      members: number[];
      subgroups: number[];
      creatorId: number;
      at: number;
      permissions: Record<GroupPermission, GroupSetting>;
    }
  | {
      type: 'group.updated';
      id: number;
      name?: string;
      description?: string;
      deactivated?: boolean;
      permissions?: Partial<Record<GroupPermission, GroupSetting>>;
    }
  | { type: 'group.members_changed'; id: number; add: number[]; remove: number[] }
  | { type: 'group.subgroups_changed'; id: number; add: number[]; remove: number[] };
