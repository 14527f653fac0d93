import { addSubscription, removeSubscription, type RealmState } from '../state.ts';
import type { ChannelChange } from './changes.ts';
import { channelKey, fillLaterChannelPermissions } from './state.ts';

export function applyChannelChange(state: RealmState, change: ChannelChange): void {
  switch (change.type) {
    case 'channel.created':
      state.channels.set(change.channel.id, structuredClone(change.channel));
      fillLaterChannelPermissions(state.channels.get(change.channel.id)!, state.systemGroupIds.get('role:nobody'));
      state.channelIdByName.set(channelKey(change.channel.name), change.channel.id);
      state.nextChannelId = Math.max(state.nextChannelId, change.channel.id + 1);
      return;
    case 'channel.updated': {
      const channel = state.channels.get(change.id);
      if (!channel) return;
      const { permissions, ...fields } = change.fields;
      if (fields.name !== undefined) {
        state.channelIdByName.delete(channelKey(channel.name));
        state.channelIdByName.set(channelKey(fields.name), channel.id);
      }
      Object.assign(channel, fields);
      if (permissions) Object.assign(channel.permissions, permissions);
      return;
    }
    case 'subscriptions.added':
      for (const entry of change.entries) addSubscription(state, entry.channelId, entry.userId, { ...entry.properties });
      return;
    case 'subscriptions.removed':
      for (const entry of change.entries) removeSubscription(state, entry.channelId, entry.userId);
      return;
    case 'subscription.properties_set':
      for (const entry of change.entries) {
        const properties = state.subscriptions.get(entry.channelId)?.get(change.userId);
        if (properties) {
          Object.assign(properties, entry.properties);
          state.unsavedSubscriptions.add(entry.channelId);
        }
      }
      return;
  }
}
