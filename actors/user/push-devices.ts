import { ChatError, ErrorCode } from '../errors.ts';
import type { PushToken, UserState } from './state.ts';

/** The devices a test notification goes to, as the original picks them: the one named, or all the user's. */
export function testNotificationDevices(state: UserState, token: string | undefined): PushToken[] {
  if (token === undefined) return [...state.pushTokens.values()];
  const device = state.pushTokens.get(token);
  if (!device) throw new ChatError(ErrorCode.INVALID_PUSH_DEVICE_TOKEN, 'Device not recognized');
  return [device];
}
