import type { RealmState } from '../state.ts';
import type { BotChange } from './changes.ts';

export function applyBotChange(state: RealmState, change: BotChange): void {
  const user = state.users.get(change.userId);
  const bot = user?.bot;
  if (!user || !bot) return;
  if (change.fullName !== undefined) user.fullName = change.fullName;
  if (change.ownerId !== undefined) bot.ownerId = change.ownerId;
  if (change.defaultSendingChannelId !== undefined) bot.defaultSendingChannelId = change.defaultSendingChannelId;
  if (change.defaultEventsRegisterChannelId !== undefined) bot.defaultEventsRegisterChannelId = change.defaultEventsRegisterChannelId;
  if (change.defaultAllPublicStreams !== undefined) bot.defaultAllPublicStreams = change.defaultAllPublicStreams;
  if (change.services !== undefined) bot.services = change.services.map((service) => ({ ...service }));
}
