import { badRequest } from '../../errors.ts';
import type { RealmState } from '../state.ts';
import { hasContentAccess, requireChannel } from './decide.ts';

/**
 * Who may ask for a channel's email address, and in whose name its mails would be sent, as the original
 * decides: a channel whose messages the caller may read; the sender the caller itself or one of its bots
 * (the original's default, its email gateway bot, when none is named).
 */
export function checkChannelEmailRequest(state: RealmState, callerId: number, channelId: number, senderId: number | undefined): void {
  const channel = requireChannel(state, channelId);
  if (!hasContentAccess(state, channel, callerId)) throw badRequest('Invalid channel ID');
  if (senderId === undefined || senderId === callerId) return;
  const sender = state.users.get(senderId);
  if (!sender?.isActive || !sender.isBot || sender.bot?.ownerId !== callerId) throw badRequest('Invalid user ID');
}
