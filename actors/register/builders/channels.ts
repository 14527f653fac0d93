import { canSeeChannel, channelView, subscriberIds, subscriptionView } from '../../realm/channels/views.ts';
import type { Builder } from '../builder.ts';

/** fetch type `subscription`: the caller's subscriptions, the ones it left, and the channels it could join. */
export const subscriptionState: Builder = ({ realm, user }, { includeSubscribers, now }) => {
  const subscriptions = [];
  for (const id of realm.subscribedBy.get(user.userId) ?? []) {
    const channel = realm.channels.get(id)!;
    subscriptions.push(subscriptionView(realm, channel, realm.subscriptions.get(id)!.get(user.userId)!, now, includeSubscribers));
  }
  const left = realm.unsubscribedBy.get(user.userId) ?? new Map();
  const unsubscribed = [];
  for (const [id, properties] of left) {
    const channel = realm.channels.get(id)!;
    if (canSeeChannel(realm, channel, user.userId)) unsubscribed.push(subscriptionView(realm, channel, properties, now, includeSubscribers));
  }
  const mine = realm.subscribedBy.get(user.userId);
  const neverSubscribed = [];
  for (const channel of realm.channels.values()) {
    if (mine?.has(channel.id) || left.has(channel.id) || !canSeeChannel(realm, channel, user.userId)) continue;
    const view = channelView(realm, channel, now);
    neverSubscribed.push(includeSubscribers ? { ...view, subscribers: subscriberIds(realm, channel.id) } : view);
  }
  return { subscriptions, unsubscribed, never_subscribed: neverSubscribed };
};

/** fetch type `stream`: every channel the caller can see. */
export const streamState: Builder = ({ realm, user }, { now }) => ({
  streams: [...realm.channels.values()].filter((channel) => canSeeChannel(realm, channel, user.userId)).map((channel) => channelView(realm, channel, now)),
});

/** fetch type `default_streams` */
export const defaultStreamsState: Builder = ({ realm }, { now }) => ({
  realm_default_streams: [...realm.channels.values()].filter((channel) => channel.isDefault && !channel.isArchived).map((channel) => channelView(realm, channel, now)),
});
