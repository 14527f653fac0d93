import type { UserChange } from './changes.ts';
import { checkSettings, settingValue } from './settings.ts';
import type { UserState } from './state.ts';

/** One change per setting whose value differs; turning drafts sync off also drops the stored drafts. */
export function decideSettings(state: UserState, requested: Record<string, unknown>): UserChange[] {
  const changes: UserChange[] = [];
  for (const [name, value] of Object.entries(checkSettings(requested))) {
    if (settingValue(state.settings, name) === value) continue;
    changes.push({ type: 'setting.changed', name, value });
    if (name === 'enable_drafts_synchronization' && value === false && state.drafts.size > 0) {
      changes.push({ type: 'drafts.cleared' });
    }
  }
  return changes;
}
