import { randomString } from '../ids.ts';
import type { Clock } from '../realm/decide.ts';
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

// The original's confirmation keys are 24 characters.
const CONFIRMATION_KEY_LENGTH = 24;

/**
 * Records a pending email change with the key its confirmation link carries. The route has checked the
 * address (well-formed, not in use); the mail goes out once this is durable.
 */
export function decideEmailChange(newEmail: string, clock: Clock): UserChange[] {
  return [{
    type: 'email.change_requested',
    pending: { newEmail, token: randomString(CONFIRMATION_KEY_LENGTH), requestedAt: Math.floor(clock.now() / 1000) },
  }];
}
