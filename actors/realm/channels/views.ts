import { CHANNEL_PERMISSIONS, type Channel, type ChannelPermission, type SubscriptionProperties } from './state.ts';
import type { WireSchema } from '../../wire/events.ts';
import type { GroupSetting } from '../groups/state.ts';
import type { RealmState } from '../state.ts';
import { systemGroupId } from '../permissions.ts';
import { Role } from '../roles.ts';
import { isRecentlyActive, weeklyTraffic } from './activity.ts';

/** The deprecated `stream_post_policy`, derived from who may post (inaccurate since feature level 333). */
function postPolicy(state: RealmState, channel: Channel): number {
  const setting = channel.permissions.can_send_message_group;
  if (setting === systemGroupId(state, 'role:administrators')) return 2;
  if (setting === systemGroupId(state, 'role:fullmembers')) return 3;
  if (setting === systemGroupId(state, 'role:moderators')) return 4;
  return 1;
}

/** The fields of a channel's view that follow its messages and the clock rather than changes to the realm (realm/version.ts). */
type ChannelTraffic = Pick<WireSchema<'BasicChannel'>, 'first_message_id' | 'is_recently_active' | 'stream_weekly_traffic'>;

/** The channel fields every view shares (GET /streams, stream events, subscriptions). */
export function channelView(state: RealmState, channel: Channel, now: number): WireSchema<'BasicChannel'> {
  return Object.assign(settledChannelFields(state, channel), channelTraffic(state, channel, now));
}

/** channelView but its traffic: what only a change to the realm changes (channels/view-json.ts keeps it as text). */
export function settledChannelFields(state: RealmState, channel: Channel): Omit<WireSchema<'BasicChannel'>, keyof ChannelTraffic> {
  const policy = postPolicy(state, channel);
  const view: Omit<WireSchema<'BasicChannel'>, ChannelPermission | keyof ChannelTraffic> = {
    stream_id: channel.id,
    name: channel.name,
    description: channel.description,
    rendered_description: channel.renderedDescription,
    date_created: channel.dateCreated,
    creator_id: channel.creatorId,
    invite_only: channel.inviteOnly,
    is_web_public: channel.isWebPublic,
    history_public_to_subscribers: channel.historyPublicToSubscribers,
    folder_id: channel.folderId ?? null,
    topics_policy: channel.topicsPolicy ?? 'inherit',
    message_retention_days: channel.messageRetentionDays,
    stream_post_policy: policy,
    is_announcement_only: policy === 2,
    is_archived: channel.isArchived,
    subscriber_count: state.subscriptions.get(channel.id)?.size ?? 0,
  };
  const permissions = {} as Record<ChannelPermission, GroupSetting>;
  for (const permission of CHANNEL_PERMISSIONS) permissions[permission] = channel.permissions[permission];
  return Object.assign(view, permissions);
}

export function channelTraffic(state: RealmState, channel: Channel, now: number): ChannelTraffic {
  const seconds = Math.floor(now / 1000);
  return {
    first_message_id: channel.firstMessageId,
    is_recently_active: isRecentlyActive(state, channel.id, channel.dateCreated, seconds),
    stream_weekly_traffic: weeklyTraffic(state, channel.id, channel.dateCreated, seconds),
  };
}

/** A subscription as clients see it, from the channel's view (which the views of many users may share); `subscribers` (the channel's, from subscriberIds) included when given. */
export function subscriptionOf(channel: WireSchema<'BasicChannel'>, properties: SubscriptionProperties, subscribers: number[] | null): WireSchema<'Subscription'> {
  const view: WireSchema<'Subscription'> = { ...channel, ...ownFields(properties) };
  if (subscribers) view.subscribers = subscribers;
  return view;
}

/** What a subscription's view holds of the user's own: the rest is the channel's, the same for every subscriber. */
export function ownFields(properties: SubscriptionProperties) {
  return {
    color: properties.color,
    is_muted: properties.isMuted,
    in_home_view: !properties.isMuted,
    pin_to_top: properties.pinToTop,
    desktop_notifications: properties.desktopNotifications,
    audible_notifications: properties.audibleNotifications,
    push_notifications: properties.pushNotifications,
    email_notifications: properties.emailNotifications,
    wildcard_mentions_notify: properties.wildcardMentionsNotify,
  } satisfies Partial<WireSchema<'Subscription'>>;
}

export function subscriberIds(state: RealmState, channelId: number): number[] {
  return [...(state.subscriptions.get(channelId)?.keys() ?? [])].sort((a, b) => a - b);
}

/** Does a user of this role see a channel without being subscribed: a public one unless a guest, a private one as an administrator? */
export const seesUnsubscribed = (inviteOnly: boolean, role: number) => (inviteOnly ? role <= Role.administrator : role !== Role.guest);

/** Can the user see that the channel exists and who is in it? */
export function canSeeChannel(state: RealmState, channel: Channel, userId: number): boolean {
  if (state.subscriptions.get(channel.id)?.has(userId)) return true;
  const user = state.users.get(userId);
  return !!user && seesUnsubscribed(channel.inviteOnly, user.role);
}

/** API names of the subscription properties, with how they map onto the stored ones. */
export const PROPERTY_NAMES = {
  color: 'color',
  is_muted: 'isMuted',
  pin_to_top: 'pinToTop',
  desktop_notifications: 'desktopNotifications',
  audible_notifications: 'audibleNotifications',
  push_notifications: 'pushNotifications',
  email_notifications: 'emailNotifications',
  wildcard_mentions_notify: 'wildcardMentionsNotify',
} as const satisfies Record<string, keyof SubscriptionProperties>;

/** The channels anyone on the Internet may read: web-public and not archived. */
export function webPublicChannels(state: RealmState): Channel[] {
  return [...state.channels.values()].filter((channel) => channel.isWebPublic && !channel.isArchived);
}
