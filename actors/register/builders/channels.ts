import { canSeeChannel, channelView, subscriberIds, subscriptionView, webPublicChannels } from '../../realm/channels/views.ts';
import { defaultProperties, SUBSCRIPTION_COLORS } from '../../realm/channels/state.ts';
import { settingValue } from '../../user/settings.ts';
import type { UserState } from '../../user/state.ts';
import type { WireRegisterKeys } from '../../wire/events.ts';
import type { Builder, InitialStateOptions } from '../builder.ts';

/** fetch type `subscription`: the caller's subscriptions, the ones it left, and the channels it could join. */
export const subscriptionState: Builder = ({ realm, user, personal, spectator }, options) => {
  const { includeSubscribers, now } = options;
  if (spectator) {
    // A spectator reads the web-public channels as if just subscribed to them, as in the original.
    const subscriptions = webPublicChannels(realm).map((channel, index) =>
      subscriptionView(realm, channel, defaultProperties(SUBSCRIPTION_COLORS[index % SUBSCRIPTION_COLORS.length]!), now, null),
    );
    return { subscriptions: withNotificationDefaults(subscriptions, null, options), unsubscribed: [], never_subscribed: [] } satisfies SubscriptionKeys;
  }
  const shown = showsArchived(options);
  const subscriptions = [];
  for (const id of realm.subscribedBy.get(user.userId) ?? []) {
    const channel = realm.channels.get(id)!;
    if (channel.isArchived && !shown) continue;
    subscriptions.push(subscriptionView(realm, channel, realm.subscriptions.get(id)!.get(user.userId)!, now, includeSubscribers ? subscriberIds(realm, id) : null));
  }
  const left = realm.unsubscribedBy.get(user.userId) ?? new Map();
  const unsubscribed = [];
  for (const [id, properties] of left) {
    const channel = realm.channels.get(id)!;
    if (channel.isArchived && !shown) continue;
    if (canSeeChannel(realm, channel, user.userId)) unsubscribed.push(subscriptionView(realm, channel, properties, now, includeSubscribers ? subscriberIds(realm, id) : null));
  }
  const mine = realm.subscribedBy.get(user.userId);
  const neverSubscribed = [];
  for (const channel of realm.channels.values()) {
    if (mine?.has(channel.id) || left.has(channel.id) || !canSeeChannel(realm, channel, user.userId)) continue;
    if (channel.isArchived && !shown) continue;
    const view = channelView(realm, channel, now);
    neverSubscribed.push(includeSubscribers ? { ...view, subscribers: subscriberIds(realm, channel.id) } : view);
  }
  return {
    subscriptions: withNotificationDefaults(subscriptions, personal, options),
    unsubscribed: withNotificationDefaults(unsubscribed, personal, options),
    never_subscribed: neverSubscribed,
  } satisfies SubscriptionKeys;
};

type SubscriptionKeys = WireRegisterKeys<'subscriptions' | 'unsubscribed' | 'never_subscribed'>;

/** Archived channels are shown only to clients that declare `archived_channels`, as their events are shaped. */
const showsArchived = (options: InitialStateOptions) => options.capabilities?.archived_channels === true;

const NOTIFICATION_SETTINGS = ['desktop_notifications', 'audible_notifications', 'push_notifications', 'email_notifications'] as const;

/**
 * A channel's notification setting is null when the user did not set it for that channel: it follows the
 * user's `enable_stream_*` setting. Clients without `notification_settings_null` cannot read null, so they get
 * the value it stands for now (a spectator's: false, as in the original). `wildcard_mentions_notify` stays
 * as it is: those clients handled its null already.
 */
function withNotificationDefaults<T extends Record<(typeof NOTIFICATION_SETTINGS)[number], boolean | null>>(views: T[], personal: UserState | null, options: InitialStateOptions) {
  if (options.capabilities?.notification_settings_null === true) return views;
  for (const view of views) {
    for (const name of NOTIFICATION_SETTINGS) {
      if (view[name] === null) view[name] = (personal ? settingValue(personal.settings, `enable_stream_${name}`) : false) as T[typeof name];
    }
  }
  return views;
}

/** fetch type `stream`: every channel the caller can see (a spectator: the web-public ones). */
export const streamState: Builder = ({ realm, user, spectator }, options) => ({
  streams: (spectator ? webPublicChannels(realm) : [...realm.channels.values()].filter((channel) => canSeeChannel(realm, channel, user.userId)))
    .filter((channel) => !channel.isArchived || showsArchived(options))
    .map((channel) => channelView(realm, channel, options.now)),
}) satisfies WireRegisterKeys<'streams'>;

/** fetch type `default_streams`: their ids since feature level 330 (none for a spectator, who joins nothing) */
export const defaultStreamsState: Builder = ({ realm, spectator }) => ({
  realm_default_streams: spectator ? [] : [...realm.channels.values()].filter((channel) => channel.isDefault && !channel.isArchived).map((channel) => channel.id),
}) satisfies WireRegisterKeys<'realm_default_streams'>;
