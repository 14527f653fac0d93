import { CHANNEL_PERMISSIONS } from '../../realm/channels/state.ts';
import { GROUP_PERMISSIONS } from '../../realm/groups/state.ts';
import { REALM_PERMISSION_DEFAULTS, type RealmPermission } from '../../realm/permissions.ts';
import { SYSTEM_GROUPS_ONLY } from '../../realm/settings/decide.ts';

/**
 * `server_supported_permission_settings`: what values each group-setting permission takes here. Every
 * permission accepts any group or anonymous group but `role:internet`, except those limited to a few system
 * groups (settings/decide.ts); the defaults are those the server gives new realms, channels and groups.
 */
const spec = (defaultGroupName: string, systemOnly?: readonly string[]) => ({
  require_system_group: systemOnly !== undefined,
  allow_internet_group: false,
  allow_nobody_group: systemOnly === undefined,
  allow_everyone_group: true,
  default_group_name: defaultGroupName,
  default_for_system_groups: null,
  allowed_system_groups: systemOnly ? [...systemOnly] : [],
});

/** The defaults of channels/decide.ts and groups/decide.ts; the creator ones named as the original names them. */
const CHANNEL_DEFAULTS: Record<(typeof CHANNEL_PERMISSIONS)[number], string> = {
  can_add_subscribers_group: 'role:nobody',
  can_remove_subscribers_group: 'role:administrators',
  can_administer_channel_group: 'channel_creator',
  can_send_message_group: 'role:everyone',
  can_subscribe_group: 'role:nobody',
  can_delete_any_message_group: 'role:nobody',
  can_delete_own_message_group: 'role:nobody',
  can_move_messages_out_of_channel_group: 'role:nobody',
  can_move_messages_within_channel_group: 'role:nobody',
  can_resolve_topics_group: 'role:nobody',
};
const GROUP_DEFAULTS: Record<(typeof GROUP_PERMISSIONS)[number], string> = {
  can_add_members_group: 'role:nobody',
  can_join_group: 'role:nobody',
  can_leave_group: 'role:everyone',
  can_manage_group: 'group_creator',
  can_mention_group: 'role:everyone',
  can_remove_members_group: 'role:nobody',
};

export const SUPPORTED_PERMISSION_SETTINGS = {
  realm: Object.fromEntries(
    Object.entries(REALM_PERMISSION_DEFAULTS).map(([name, group]) => [name, spec(group, SYSTEM_GROUPS_ONLY[name as RealmPermission])]),
  ),
  stream: Object.fromEntries(Object.entries(CHANNEL_DEFAULTS).map(([name, group]) => [name, spec(group)])),
  group: Object.fromEntries(Object.entries(GROUP_DEFAULTS).map(([name, group]) => [name, spec(group)])),
};
