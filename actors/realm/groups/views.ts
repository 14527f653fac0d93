import type { RealmState } from '../state.ts';
import { GROUP_PERMISSIONS, type UserGroup } from './state.ts';

/** A group as the API shows it; deactivated users are left out of memberships (feature level 303). */
export function groupView(state: RealmState, group: UserGroup) {
  const view: Record<string, unknown> = {
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
  for (const permission of GROUP_PERMISSIONS) view[permission] = group.permissions[permission];
  return view;
}

export function activeMembers(state: RealmState, group: UserGroup): number[] {
  return [...group.members].filter((id) => state.users.get(id)?.isActive).sort((a, b) => a - b);
}
