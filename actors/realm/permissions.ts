import { settingIncludes, type GroupSetting, type SystemGroupName } from './groups/state.ts';
import type { RealmState } from './state.ts';

/**
 * The realm's group-setting permissions and the system group each defaults to (the original server's
 * defaults). Every permission check of the server resolves through `allowed`, in one place.
 */
export const REALM_PERMISSION_DEFAULTS = {
  can_create_groups: 'role:members',
  can_manage_all_groups: 'role:administrators',
  can_create_public_channel_group: 'role:members',
  can_create_private_channel_group: 'role:members',
  can_create_web_public_channel_group: 'role:owners',
  can_add_subscribers_group: 'role:members',
  can_mention_many_users_group: 'role:administrators',
  can_move_messages_between_channels_group: 'role:members',
  can_move_messages_between_topics_group: 'role:everyone',
  can_resolve_topics_group: 'role:everyone',
  can_delete_any_message_group: 'role:administrators',
  can_delete_own_message_group: 'role:everyone',
  can_invite_users_group: 'role:members',
  /** reusable invitation links (the original's name has no `can_` prefix) */
  create_multiuse_invite_group: 'role:administrators',
  can_access_all_users_group: 'role:everyone',
  direct_message_initiator_group: 'role:everyone',
  direct_message_permission_group: 'role:everyone',
  can_create_bots_group: 'role:members',
  /** incoming-webhook bots only, on top of `can_create_bots_group` */
  can_create_write_only_bots_group: 'role:members',
  can_add_custom_emoji_group: 'role:members',
  /** who may set a channel's message-deletion permissions */
  can_set_delete_message_policy_group: 'role:moderators',
  /** who may set a channel's topics policy */
  can_set_topics_policy_group: 'role:moderators',
  can_manage_billing_group: 'role:administrators',
  can_summarize_topics_group: 'role:everyone',
} as const satisfies Record<string, SystemGroupName>;

export type RealmPermission = keyof typeof REALM_PERMISSION_DEFAULTS;

export function systemGroupId(state: RealmState, name: SystemGroupName): number {
  const id = state.systemGroupIds.get(name);
  if (id === undefined) throw new Error(`realm ${state.realmId} has no system group ${name}`);
  return id;
}

/**
 * Fills in the permissions a realm snapshot predates (added to the table above after it was written) with
 * their defaults; a realm replayed from its creation gets them from `createSystemGroups`.
 */
export function fillPermissionDefaults(state: RealmState): void {
  for (const [permission, group] of Object.entries(REALM_PERMISSION_DEFAULTS)) {
    state.permissions[permission as RealmPermission] ??= systemGroupId(state, group);
  }
}

/** Is the user in the group setting (a realm permission name, or a setting value)? */
export function allowed(state: RealmState, setting: RealmPermission | GroupSetting, userId: number): boolean {
  const value = typeof setting === 'string' ? state.permissions[setting] : setting;
  return settingIncludes(state, value, userId);
}
