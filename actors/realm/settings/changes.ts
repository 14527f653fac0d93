import type { GroupSetting } from '../groups/state.ts';
import type { RealmPermission } from '../permissions.ts';
import type { RealmSettingName } from './state.ts';

/** One realm property changed (its name, description, or a setting of settings/state.ts). */
export type RealmSettingsChange =
  | { type: 'realm.property_changed'; name: 'name' | 'description' | RealmSettingName; value: string | number | boolean | null }
  | { type: 'realm.permission_changed'; name: RealmPermission; value: GroupSetting };
