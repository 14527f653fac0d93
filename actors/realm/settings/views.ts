import type { GroupSetting, SystemGroupName } from '../groups/state.ts';
import { REALM_PERMISSION_DEFAULTS, type RealmPermission } from '../permissions.ts';
import type { RealmState } from '../state.ts';
import { REALM_SETTING_NAMES, topicsRequired, type RealmSettings } from './state.ts';

/**
 * The policies older clients read in place of some permissions: the system group's number, or for any other
 * group the number of the widest group listed (the policies describe a superset of who may act).
 */
const COMMON_POLICY: Partial<Record<SystemGroupName, number>> = { 'role:members': 1, 'role:administrators': 2, 'role:fullmembers': 3, 'role:moderators': 4 };
const WEB_PUBLIC_POLICY: Partial<Record<SystemGroupName, number>> = { 'role:moderators': 4, 'role:administrators': 2, 'role:owners': 7, 'role:nobody': 6 };
const WILDCARD_POLICY: Partial<Record<SystemGroupName, number>> = {
  'role:everyone': 1, 'role:members': 2, 'role:fullmembers': 3, 'role:moderators': 7, 'role:administrators': 5, 'role:nobody': 6,
};
const LEGACY_POLICIES = {
  create_public_stream_policy: ['can_create_public_channel_group', COMMON_POLICY],
  create_private_stream_policy: ['can_create_private_channel_group', COMMON_POLICY],
  create_web_public_stream_policy: ['can_create_web_public_channel_group', WEB_PUBLIC_POLICY],
  wildcard_mention_policy: ['can_mention_many_users_group', WILDCARD_POLICY],
} satisfies Record<string, [RealmPermission, Partial<Record<SystemGroupName, number>>]>;
type LegacyPolicy = keyof typeof LEGACY_POLICIES;

/** The legacy policy of a permission, by its realm property name (without `realm_`). */
export function legacyPolicies(state: RealmState): Record<LegacyPolicy, number> {
  const policies = {} as Record<LegacyPolicy, number>;
  for (const [name, [permission, values]] of Object.entries(LEGACY_POLICIES) as [LegacyPolicy, (typeof LEGACY_POLICIES)[LegacyPolicy]][]) {
    const value = state.permissions[permission];
    const group = typeof value === 'number' ? state.groups.get(value) : undefined;
    const named = group?.isSystemGroup ? values[group.name as SystemGroupName] : undefined;
    policies[name] = named ?? Object.values(values)[0]!;
  }
  return policies;
}

/**
 * The registration's `realm_*` fields for the realm's settings and group-setting permissions, by the names the
 * loops below give them (the registration builder checks these names and types against the document).
 */
export type RealmSettingsView = { [K in keyof RealmSettings as `realm_${K}`]: RealmSettings[K] } & {
  [K in RealmPermission as `realm_${K}`]: GroupSetting;
} & { [K in LegacyPolicy as `realm_${K}`]: number } & { realm_mandatory_topics: boolean; realm_allow_edit_history: boolean };

export function realmSettingsView(state: RealmState): RealmSettingsView {
  const view: Record<string, unknown> = {};
  for (const name of REALM_SETTING_NAMES) view[`realm_${name}`] = state.settings[name];
  view.realm_mandatory_topics = topicsRequired(state.settings);
  view.realm_allow_edit_history = state.settings.message_edit_history_visibility_policy !== 'none';
  for (const name of Object.keys(REALM_PERMISSION_DEFAULTS) as RealmPermission[]) view[`realm_${name}`] = state.permissions[name];
  for (const [name, value] of Object.entries(legacyPolicies(state))) view[`realm_${name}`] = value;
  return view as RealmSettingsView;
}
