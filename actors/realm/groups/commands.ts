import type { Caller } from '../commands.ts';
import type { GroupPermission, GroupSetting } from './state.ts';

export type GroupCommand =
  | {
      type: 'group.create';
      caller: Caller;
      name: string;
      description: string;
      members: number[];
      subgroups: number[];
      permissions: Partial<Record<GroupPermission, GroupSetting>>;
    }
  | {
      type: 'group.update';
      caller: Caller;
      id: number;
      name?: string;
      description?: string;
      deactivated?: boolean;
      /** each change names the value it expects to replace, so concurrent edits do not overwrite each other */
      permissions?: Partial<Record<GroupPermission, { old?: GroupSetting; new: GroupSetting }>>;
    }
  | { type: 'group.members'; caller: Caller; id: number; add: number[]; remove: number[]; addSubgroups: number[]; removeSubgroups: number[] };
