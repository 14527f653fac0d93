import type { RealmState } from '../state.ts';
import type { RealmSettingsChange } from './changes.ts';

export function applyRealmSettingsChange(state: RealmState, change: RealmSettingsChange): void {
  if (change.type === 'realm.permission_changed') {
    state.permissions[change.name] = change.value;
    return;
  }
  if (change.name === 'name' || change.name === 'description') state[change.name] = String(change.value);
  else (state.settings as unknown as Record<string, unknown>)[change.name] = change.value;
}
