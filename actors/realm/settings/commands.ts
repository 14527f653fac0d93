import type { Caller } from '../commands.ts';
import type { GroupSetting } from '../groups/state.ts';
import type { RealmPermission } from '../permissions.ts';
import type { RealmSettings } from './state.ts';

export type RealmSettingsCommand = {
  type: 'realm.update';
  caller: Caller;
  name?: string;
  description?: string;
  settings: Partial<RealmSettings>;
  /** each change names the value it expects to replace, so concurrent edits do not overwrite each other */
  permissions: Partial<Record<RealmPermission, { new: GroupSetting; old?: GroupSetting }>>;
  /** the domain of the notification bot's email (the realm's host, which the front end knows), if it must be made */
  botDomain?: string;
};
