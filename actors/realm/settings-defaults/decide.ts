import { badRequest, notAdmin } from '../../errors.ts';
import { checkSettings, settingValue } from '../../user/settings.ts';
import type { Caller } from '../commands.ts';
import { isAdmin, type RealmState } from '../state.ts';
import type { SettingsDefaultsChange } from './changes.ts';
import type { SettingsDefaultsCommand } from './commands.ts';
import { DEFAULTABLE_SETTINGS } from './state.ts';

/** Administrators only; every value is checked (the first bad one named) before anything changes. */
export function decideSettingsDefaults(state: RealmState, command: SettingsDefaultsCommand): SettingsDefaultsChange[] {
  requireAdmin(state, command.caller);
  for (const name of Object.keys(command.settings)) {
    if (!DEFAULTABLE_SETTINGS.includes(name)) throw badRequest(`Invalid setting '${name}' for new users`);
  }
  const changes: SettingsDefaultsChange[] = [];
  for (const [name, value] of Object.entries(checkSettings(command.settings))) {
    if (settingValue(state.userSettingsDefaults, name) !== value) changes.push({ type: 'settings_default.changed', name, value });
  }
  return changes;
}

function requireAdmin(state: RealmState, caller: Caller): void {
  if (caller.kind === 'operator') return;
  const user = state.users.get(caller.userId);
  if (!user || !isAdmin(user)) throw notAdmin();
}
