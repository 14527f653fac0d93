import type { GroupSetting } from '../groups/state.ts';
import type { Channel, ChannelPermission, SubscriptionProperties } from './state.ts';

export interface SubscriptionEntry {
  channelId: number;
  userId: number;
}

/** The channel fields an update may change. */
export type ChannelFields = Partial<
  Pick<Channel, 'name' | 'description' | 'renderedDescription' | 'inviteOnly' | 'isWebPublic' | 'historyPublicToSubscribers' | 'messageRetentionDays' | 'isArchived' | 'isDefault' | 'folderId' | 'topicsPolicy'>
> & { permissions?: Partial<Record<ChannelPermission, GroupSetting>> };

export type ChannelChange =
  | { type: 'channel.created'; channel: Channel }
  | { type: 'channel.updated'; id: number; fields: ChannelFields }
  | { type: 'subscriptions.added'; entries: (SubscriptionEntry & { properties: SubscriptionProperties })[] }
  | { type: 'subscriptions.removed'; entries: SubscriptionEntry[] }
  | { type: 'subscription.properties_set'; userId: number; entries: { channelId: number; properties: Partial<SubscriptionProperties> }[] };
