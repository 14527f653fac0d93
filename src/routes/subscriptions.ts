import { MAX_BULK_NEW_SUBSCRIPTION_MESSAGES } from '../../actors/realm/notifications/decide.ts';
import { botDomain } from './bots.ts';
import { findAccessibleUser } from '../../actors/realm/user-access.ts';
import { z } from 'zod';
import { badRequest } from '../../actors/errors.ts';
import { channelKey } from '../../actors/realm/channels/state.ts';
import { canSeeChannel, PROPERTY_NAMES, subscriptionView } from '../../actors/realm/channels/views.ts';
import type { NewChannelOptions } from '../../actors/realm/channels/commands.ts';
import type { RealmState, UserProfile } from '../../actors/realm/state.ts';
import { includeSubscribers, p } from '../http/params.ts';
import type { AppServices } from '../services.ts';
import { newChannelOptions, newChannelParams, principals, resolvePrincipals } from './channel-params.ts';
import { route } from './route.ts';

const subscriptionList = z.array(z.object({ name: z.string(), description: z.string().optional() }));
const HEX_COLOR = /^#[0-9a-fA-F]{6}$/;

const propertyEntry = z
  .object({ stream_id: z.number().int(), property: z.enum(Object.keys(PROPERTY_NAMES) as [keyof typeof PROPERTY_NAMES | 'in_home_view']), value: z.unknown() })
  .or(z.object({ stream_id: z.number().int(), property: z.literal('in_home_view'), value: z.unknown() }));

/** Names, grouped by user id (as string keys, the wire shape since feature level 289). */
function byUser(pairs: [number, string][]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [userId, name] of pairs) (out[String(userId)] ??= []).push(name);
  return out;
}

function channelIdsByName(realm: RealmState, names: string[]): number[] {
  return names.map((name) => {
    const id = realm.channelIdByName.get(channelKey(name));
    if (id === undefined) throw badRequest(`Invalid channel name '${name}'`);
    return id;
  });
}

/** Validates one property's value and maps it onto the stored properties. */
function propertyValue(property: string, value: unknown): [string, unknown] {
  if (property === 'color') {
    if (typeof value !== 'string' || !HEX_COLOR.test(value)) throw badRequest(`Invalid color: ${JSON.stringify(value)}`);
    return ['color', value.toLowerCase()];
  }
  if (typeof value !== 'boolean') throw badRequest(`${property} is not a boolean`);
  if (property === 'in_home_view') return ['isMuted', !value];
  return [PROPERTY_NAMES[property as keyof typeof PROPERTY_NAMES], value];
}

type SubscriptionRequest = z.infer<typeof subscriptionList>;

/** Subscribes the users, making the channels that do not exist: POST (and PATCH) /users/me/subscriptions. */
async function addSubscriptions(
  services: AppServices, realm: RealmState, user: UserProfile, subscriptions: SubscriptionRequest, userIds: number[],
  options: NewChannelOptions, authorizationErrorsFatal: boolean, sendNewSubscriptionMessages = false,
): Promise<Record<string, unknown>> {
  const names = subscriptions.map((s) => s.name.trim());
  const changes = await services.runtime.execute(realm.realmId, {
    type: 'channel.subscribe',
    caller: { kind: 'user', userId: user.userId },
    channels: subscriptions.map((s) => ({ name: s.name, description: s.description ?? '' })),
    userIds,
    authorizationErrorsFatal,
    options,
    ...(sendNewSubscriptionMessages ? { newSubscriptionMessages: { botDomain: botDomain(services, realm) } } : {}),
  });
  const added = new Set<string>();
  for (const change of changes) if (change.type === 'subscriptions.added') for (const e of change.entries) added.add(`${e.channelId}:${e.userId}`);
  const subscribed: [number, string][] = [];
  const already: [number, string][] = [];
  const unauthorized = new Set<string>();
  const state = services.runtime.realmState(realm.realmId);
  for (const name of new Set(names)) {
    const channel = state.channels.get(state.channelIdByName.get(channelKey(name)) ?? -1);
    for (const userId of userIds) {
      if (channel && added.has(`${channel.id}:${userId}`)) subscribed.push([userId, channel.name]);
      else if (channel && state.subscriptions.get(channel.id)?.has(userId)) already.push([userId, channel.name]);
      else unauthorized.add(channel?.name ?? name);
    }
  }
  const result: Record<string, unknown> = { subscribed: byUser(subscribed), already_subscribed: byUser(already) };
  if (!authorizationErrorsFatal) result.unauthorized = [...unauthorized];
  if (sendNewSubscriptionMessages) {
    // Told (by newSubscriptionNotices) unless the request subscribed more people than the bound.
    const told = new Set([...added].map((key) => Number(key.split(':')[1])).filter((id) => id !== user.userId && state.users.get(id)?.isBot === false));
    result.new_subscription_messages_sent = told.size <= MAX_BULK_NEW_SUBSCRIPTION_MESSAGES;
  }
  return result;
}

/** Unsubscribes the users from the channels: DELETE (and PATCH) /users/me/subscriptions. */
async function removeSubscriptions(services: AppServices, realm: RealmState, user: UserProfile, channelIds: number[], userIds: number[]) {
  const changes = await services.runtime.execute(realm.realmId, {
    type: 'channel.unsubscribe', caller: { kind: 'user', userId: user.userId }, channelIds, userIds,
  });
  const removed = new Set<number>();
  for (const change of changes) if (change.type === 'subscriptions.removed') for (const e of change.entries) removed.add(e.channelId);
  const names = (ids: number[]) => ids.map((id) => realm.channels.get(id)!.name);
  return { removed: names(channelIds.filter((id) => removed.has(id))), not_removed: names(channelIds.filter((id) => !removed.has(id))) };
}

export const subscriptionRoutes = [
  route({
    method: 'POST',
    path: '/users/me/subscriptions',
    auth: 'user',
    params: {
      subscriptions: p.json(subscriptionList),
      principals: principals.optional(),
      authorization_errors_fatal: p.bool().default(true),
      send_new_subscription_messages: p.bool().default(true),
      ...newChannelParams,
    },
    handle({ services, realm, user }, params) {
      const userIds = resolvePrincipals(realm, params.principals, user.userId);
      const options = newChannelOptions(params, services.config.webPublicStreamsEnabled);
      return addSubscriptions(services, realm, user, params.subscriptions, userIds, options, params.authorization_errors_fatal, params.send_new_subscription_messages);
    },
  }),

  route({
    method: 'GET',
    path: '/users/me/subscriptions',
    auth: 'user',
    params: { include_subscribers: includeSubscribers().default(false) },
    handle({ services, realm, user }, params) {
      const now = services.runtime.clock.now();
      const subscriptions = [...(realm.subscribedBy.get(user.userId) ?? [])].map((id) =>
        subscriptionView(realm, realm.channels.get(id)!, realm.subscriptions.get(id)!.get(user.userId)!, now, params.include_subscribers),
      );
      return { subscriptions };
    },
  }),

  route({
    method: 'DELETE',
    path: '/users/me/subscriptions',
    auth: 'user',
    params: { subscriptions: p.json(z.array(z.string())), principals: principals.optional() },
    handle({ services, realm, user }, params) {
      const userIds = resolvePrincipals(realm, params.principals, user.userId);
      return removeSubscriptions(services, realm, user, channelIdsByName(realm, params.subscriptions), userIds);
    },
  }),

  route({
    method: 'PATCH',
    path: '/users/me/subscriptions',
    auth: 'user',
    params: { add: p.json(subscriptionList).default([]), delete: p.json(z.array(z.string())).default([]) },
    async handle({ services, realm, user }, params) {
      if (!params.add.length && !params.delete.length) throw badRequest('Nothing to do. Specify at least one of "add" or "delete".');
      // The removals are named before anything changes, so that an unknown name fails the whole request.
      const channelIds = channelIdsByName(realm, params.delete);
      // The original's defaults for a channel this form creates: it takes no channel parameters.
      const options: NewChannelOptions = { inviteOnly: false, isWebPublic: false, messageRetentionDays: null, isDefault: false, permissions: {}, announce: false };
      const added = params.add.length ? await addSubscriptions(services, realm, user, params.add, [user.userId], options, true) : { subscribed: {}, already_subscribed: {} };
      const removed = channelIds.length ? await removeSubscriptions(services, realm, user, channelIds, [user.userId]) : { removed: [], not_removed: [] };
      return { ...added, ...removed };
    },
  }),

  route({
    method: 'POST',
    path: '/users/me/subscriptions/properties',
    auth: 'user',
    params: { subscription_data: p.json(z.array(propertyEntry).min(1)) },
    async handle({ services, realm, user }, params) {
      // Every entry is checked before anything is applied: a batch is all or nothing.
      const entries = params.subscription_data.map((entry) => {
        const [stored, value] = propertyValue(entry.property, entry.value);
        return { channelId: entry.stream_id, properties: { [stored]: value } };
      });
      await services.runtime.execute(realm.realmId, {
        type: 'subscription.properties', caller: { kind: 'user', userId: user.userId }, userId: user.userId, entries,
      });
      return {};
    },
  }),

  route({
    method: 'GET',
    path: '/users/{user_id}/subscriptions/{stream_id}',
    auth: 'user',
    params: { user_id: p.int(), stream_id: p.int() },
    handle({ realm, user }, params) {
      if (!findAccessibleUser(realm, user.userId, params.user_id)) throw badRequest('No such user');
      const channel = realm.channels.get(params.stream_id);
      // Who is in a private channel is for its subscribers and administrators (test/security.test.ts).
      if (!channel || !canSeeChannel(realm, channel, user.userId)) throw badRequest('Invalid channel ID');
      return { is_subscribed: realm.subscriptions.get(params.stream_id)?.has(params.user_id) ?? false };
    },
  }),
];
