import { canSeeChannel, ownFields, webPublicChannels } from '../../realm/channels/views.ts';
import { ChannelViewList } from '../../realm/channels/view-json.ts';
import { defaultProperties, SUBSCRIPTION_COLORS, type SubscriptionProperties } from '../../realm/channels/state.ts';
import { settingValue } from '../../user/settings.ts';
import type { UserState } from '../../user/state.ts';
import type { WireRegister, WireRegisterKeys } from '../../wire/events.ts';
import { SerializedValue, type Builder, type InitialStateOptions } from '../builder.ts';

/**
 * fetch type `subscription`: the caller's subscriptions, the ones it left, and the channels it could join,
 * each list serialized as it is made (ChannelViewList), since a member may be in thousands of channels.
 */
export const subscriptionState: Builder = ({ realm, user, personal, spectator }, options) => {
  const { includeSubscribers, now } = options;
  const own = ownFieldsFor(spectator ? null : personal, options);
  if (spectator) {
    // A spectator reads the web-public channels as if just subscribed to them, as in the original.
    const subscriptions = new ChannelViewList(realm, now, false);
    webPublicChannels(realm).forEach((channel, index) => subscriptions.subscription(channel, own(defaultProperties(SUBSCRIPTION_COLORS[index % SUBSCRIPTION_COLORS.length]!))));
    return { subscriptions: serialized(subscriptions), unsubscribed: [], never_subscribed: [] } satisfies SubscriptionKeys;
  }
  const shown = showsArchived(options);
  const subscriptions = new ChannelViewList(realm, now, includeSubscribers);
  for (const id of realm.subscribedBy.get(user.userId) ?? []) {
    const channel = realm.channels.get(id)!;
    if (channel.isArchived && !shown) continue;
    subscriptions.subscription(channel, own(realm.subscriptions.get(id)!.get(user.userId)!));
  }
  const left = realm.unsubscribedBy.get(user.userId) ?? new Map();
  const unsubscribed = new ChannelViewList(realm, now, includeSubscribers);
  for (const [id, properties] of left) {
    const channel = realm.channels.get(id)!;
    if (channel.isArchived && !shown) continue;
    if (canSeeChannel(realm, channel, user.userId)) unsubscribed.subscription(channel, own(properties));
  }
  const mine = realm.subscribedBy.get(user.userId);
  const neverSubscribed = new ChannelViewList(realm, now, includeSubscribers);
  for (const channel of realm.channels.values()) {
    if (mine?.has(channel.id) || left.has(channel.id) || !canSeeChannel(realm, channel, user.userId)) continue;
    if (channel.isArchived && !shown) continue;
    neverSubscribed.channel(channel);
  }
  return {
    subscriptions: serialized(subscriptions),
    unsubscribed: serialized(unsubscribed),
    never_subscribed: serialized(neverSubscribed),
  } satisfies SubscriptionKeys;
};

type SubscriptionKeys = { [K in 'subscriptions' | 'unsubscribed' | 'never_subscribed']: WireRegister[K] | SerializedValue<WireRegister[K]> };

const serialized = <T>(list: ChannelViewList) => new SerializedValue<T>(list.close());

/** Archived channels are shown only to clients that declare `archived_channels`, as their events are shaped. */
const showsArchived = (options: InitialStateOptions) => options.capabilities?.archived_channels === true;

const NOTIFICATION_SETTINGS = ['desktop_notifications', 'audible_notifications', 'push_notifications', 'email_notifications'] as const;

/**
 * A subscription's own fields (ownFields) as this client reads them. A channel's notification setting is null
 * when the user did not set it for that channel: it follows the user's `enable_stream_*` setting. Clients
 * without `notification_settings_null` cannot read null, so they get the value it stands for now (a
 * spectator's: false, as in the original). `wildcard_mentions_notify` stays as it is: those clients handled
 * its null already.
 */
function ownFieldsFor(personal: UserState | null, options: InitialStateOptions): (properties: SubscriptionProperties) => ReturnType<typeof ownFields> {
  if (options.capabilities?.notification_settings_null === true) return ownFields;
  const defaults = NOTIFICATION_SETTINGS.map((name) => [name, personal ? settingValue(personal.settings, `enable_stream_${name}`) === true : false] as const);
  return (properties) => {
    const fields = ownFields(properties);
    for (const [name, value] of defaults) fields[name] ??= value;
    return fields;
  };
}

/** fetch type `stream`: every channel the caller can see (a spectator: the web-public ones). */
export const streamState: Builder = ({ realm, user, spectator }, options) => {
  const streams = new ChannelViewList(realm, options.now, false);
  for (const channel of spectator ? webPublicChannels(realm) : realm.channels.values()) {
    if (!spectator && !canSeeChannel(realm, channel, user.userId)) continue;
    if (!channel.isArchived || showsArchived(options)) streams.channel(channel);
  }
  return { streams: serialized(streams) } satisfies { streams: SerializedValue<WireRegister['streams']> };
};

/** fetch type `default_streams`: their ids since feature level 330 (none for a spectator, who joins nothing) */
export const defaultStreamsState: Builder = ({ realm, spectator }) => ({
  realm_default_streams: spectator ? [] : [...realm.channels.values()].filter((channel) => channel.isDefault && !channel.isArchived).map((channel) => channel.id),
}) satisfies WireRegisterKeys<'realm_default_streams'>;
