import { REALM_PERMISSION_DEFAULTS, type RealmPermission } from '../permissions.ts';
import type { RealmState } from '../state.ts';
import { REALM_SETTING_NAMES, topicsRequired } from './state.ts';

/** The registration's `realm_*` fields for the realm's settings and group-setting permissions. */
export function realmSettingsView(state: RealmState): Record<string, unknown> {
  const view: Record<string, unknown> = {};
  for (const name of REALM_SETTING_NAMES) view[`realm_${name}`] = state.settings[name];
  view.realm_mandatory_topics = topicsRequired(state.settings);
  for (const name of Object.keys(REALM_PERMISSION_DEFAULTS) as RealmPermission[]) view[`realm_${name}`] = state.permissions[name];
  return view;
}
