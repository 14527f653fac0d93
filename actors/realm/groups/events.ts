import type { ApiEvent } from '../../events.ts';
import type { WireEventOf } from '../../wire/events.ts';
import type { RealmState } from '../state.ts';
import type { GroupChange } from './changes.ts';
import { groupView } from './views.ts';

/** The `user_group` events of a group change, for everyone in the realm. */
export function groupEvents(state: RealmState, change: GroupChange): ApiEvent[] {
  switch (change.type) {
    case 'group.created': {
      const group = state.groups.get(change.id);
      return group ? [{ type: 'user_group', op: 'add', group: groupView(state, group) }] : [];
    }
    case 'group.updated': {
      const { type: _type, id, permissions, ...data } = change;
      return [{ type: 'user_group', op: 'update', group_id: id, data: { ...data, ...permissions } }];
    }
    case 'group.members_changed':
      return [
        ...(change.add.length ? [{ type: 'user_group', op: 'add_members', group_id: change.id, user_ids: change.add } satisfies WireEventOf<'user_group', 'add_members'>] : []),
        ...(change.remove.length ? [{ type: 'user_group', op: 'remove_members', group_id: change.id, user_ids: change.remove } satisfies WireEventOf<'user_group', 'remove_members'>] : []),
      ];
    case 'group.subgroups_changed':
      return [
        ...(change.add.length ? [{ type: 'user_group', op: 'add_subgroups', group_id: change.id, direct_subgroup_ids: change.add } satisfies WireEventOf<'user_group', 'add_subgroups'>] : []),
        ...(change.remove.length ? [{ type: 'user_group', op: 'remove_subgroups', group_id: change.id, direct_subgroup_ids: change.remove } satisfies WireEventOf<'user_group', 'remove_subgroups'>] : []),
      ];
  }
}
