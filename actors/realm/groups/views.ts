import type { RealmState } from '../state.ts';
import { GROUP_PERMISSIONS, type GroupPermission, type GroupSetting, type UserGroup } from './state.ts';
import type { WireSchema } from '../../wire/events.ts';

/** A group as the API shows it; deactivated users are left out of memberships (feature level 303). */
export function groupView(state: RealmState, group: UserGroup): WireSchema<'UserGroup'> {
  const view: Omit<WireSchema<'UserGroup'>, GroupPermission> = {
    id: group.id,
    name: group.name,
    description: group.description,
    members: activeMembers(state, group),
    direct_subgroup_ids: [...group.subgroups].sort((a, b) => a - b),
    is_system_group: group.isSystemGroup,
    creator_id: group.creatorId,
    date_created: group.dateCreated,
    deactivated: group.deactivated,
  };
  const permissions = {} as Record<GroupPermission, GroupSetting>;
  for (const permission of GROUP_PERMISSIONS) permissions[permission] = group.permissions[permission];
  return Object.assign(view, permissions);
}

export function activeMembers(state: RealmState, group: UserGroup): number[] {
  return [...group.members].filter((id) => state.users.get(id)?.isActive).sort((a, b) => a - b);
}
