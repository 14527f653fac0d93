import { groupView } from '../../realm/groups/views.ts';
import type { Builder } from '../builder.ts';

/** fetch type `user_groups`: every active group (deactivated ones are issue 5's capability rule). */
export const userGroupsState: Builder = ({ realm }) => ({
  realm_user_groups: [...realm.groups.values()].filter((group) => !group.deactivated).map((group) => groupView(realm, group)),
});
