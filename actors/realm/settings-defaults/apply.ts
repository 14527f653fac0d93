import type { RealmState } from '../state.ts';
import type { SettingsDefaultsChange } from './changes.ts';

export function applySettingsDefaultsChange(state: RealmState, change: SettingsDefaultsChange): void {
  state.userSettingsDefaults[change.name] = change.value;
}
