import { MAX_BULK_NEW_SUBSCRIPTION_MESSAGES } from '../../actors/realm/notifications/decide.ts';
import { botDomain } from './bots.ts';
import { findAccessibleUser } from '../../actors/realm/user-access.ts';
import { z } from 'zod';
import { badRequest } from '../../actors/errors.ts';
import { channelKey, type Channel } from '../../actors/realm/channels/state.ts';
import { canSeeChannel, ownFields, PROPERTY_NAMES } from '../../actors/realm/channels/views.ts';
import { ChannelViewList } from '../../actors/realm/channels/view-json.ts';
import { PartsFields } from '../http/envelope.ts';
import type { NewChannelOptions } from '../../actors/realm/channels/commands.ts';
import { findPrincipal, type Principal } from '../../actors/realm/channels/principals.ts';
import type { RealmChange } from '../../actors/realm/changes.ts';
import type { RealmCommand } from '../../actors/realm/commands.ts';
import type { RealmState, UserProfile } from '../../actors/realm/state.ts';
import { includeSubscribers, p } from '../http/params.ts';
import type { AppServices } from '../services.ts';
import { newChannelOptions, newChannelParams, principals, principalsOrSelf } from './channel-params.ts';
import { route } from './route.ts';
import type { WireResponse } from '../../actors/wire/responses.ts';

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
type RealmChanges = readonly RealmChange[];

/**
 * Runs a subscription command and reads its outcome from the state as the command left it: the runtime
 * decides and applies it before its first await (Runtime.execute), so that state is the turn's, whatever other
 * requests change before the commit is durable. The actor resolves the names and principals
 * (channels/principals.ts); `read` looks them up without failing (when the actor refused, its error answers).
 */
async function subscriptionTurn<T>(services: AppServices, realm: RealmState, command: RealmCommand, read: (state: RealmState) => T): Promise<[T, RealmChanges]> {
  const done = services.runtime.execute(realm.realmId, command);
  let outcome: T;
  try {
    outcome = read(services.runtime.realmState(realm.realmId));
  } finally {
    // Settled before going on, so that a refusal is never left unhandled.
    await done.catch(() => undefined);
  }
  return [outcome, await done];
}

/** The requested channels and users as they stand (those the actor refused are not there: it refused the command). */
function requested(state: RealmState, names: readonly string[], principals: readonly Principal[], callerId: number): { channels: Map<string, Channel>; userIds: number[] } {
  // By key: a member may name thousands of channels, and a search of a list for each took 0.3 s for 2,500.
  const channels = new Map<string, Channel>();
  for (const name of names) {
    const key = channelKey(name);
    const channel = state.channels.get(state.channelIdByName.get(key) ?? -1);
    if (channel) channels.set(key, channel);
  }
  const userIds = principals.map((principal) => findPrincipal(state, principal, callerId)?.userId).filter((id) => id !== undefined);
  return { channels, userIds };
}

/** Each requested user and channel, by name, and whether the user is subscribed to it now. */
function subscribeOutcome(state: RealmState, names: readonly string[], principals: readonly Principal[], callerId: number) {
  const { channels, userIds } = requested(state, names, principals, callerId);
  const pairs: { userId: number; channelId: number | null; name: string; subscribedNow: boolean }[] = [];
  for (const name of new Set(names.map((n) => n.trim()))) {
    const channel = channels.get(channelKey(name));
    for (const userId of userIds) {
      pairs.push({ userId, channelId: channel?.id ?? null, name: channel?.name ?? name, subscribedNow: !!channel && !!state.subscriptions.get(channel.id)?.has(userId) });
    }
  }
  return { pairs, notified: (userId: number) => userId !== callerId && state.users.get(userId)?.isBot === false };
}

/** `subscribed` (by this request) and `already_subscribed`, by user, and the channels skipped as not accessible. */
function subscribeAnswer(outcome: ReturnType<typeof subscribeOutcome>, changes: RealmChanges) {
  const added = new Set<string>();
  for (const change of changes) if (change.type === 'subscriptions.added') for (const e of change.entries) added.add(`${e.channelId}:${e.userId}`);
  const subscribed: [number, string][] = [];
  const already: [number, string][] = [];
  const unauthorized = new Set<string>();
  for (const { userId, channelId, name, subscribedNow } of outcome.pairs) {
    if (added.has(`${channelId}:${userId}`)) subscribed.push([userId, name]);
    else if (subscribedNow) already.push([userId, name]);
    else unauthorized.add(name);
  }
  return { added, unauthorized, answer: { subscribed: byUser(subscribed), already_subscribed: byUser(already) } };
}

/** `removed` and `not_removed`: the channels named, as they are named now. */
function unsubscribeOutcome(state: RealmState, names: readonly string[]) {
  return names.map((name) => state.channels.get(state.channelIdByName.get(channelKey(name)) ?? -1)).filter((channel) => channel !== undefined).map((channel) => [channel.id, channel.name] as const);
}

function unsubscribeAnswer(outcome: ReturnType<typeof unsubscribeOutcome>, changes: RealmChanges) {
  const removed = new Set<number>();
  for (const change of changes) if (change.type === 'subscriptions.removed') for (const e of change.entries) removed.add(e.channelId);
  return { removed: outcome.filter(([id]) => removed.has(id)).map(([, name]) => name), not_removed: outcome.filter(([id]) => !removed.has(id)).map(([, name]) => name) };
}

/** Subscribes the users, making the channels that do not exist: POST /users/me/subscriptions. */
async function addSubscriptions(
  services: AppServices, realm: RealmState, user: UserProfile, subscriptions: SubscriptionRequest, principals: readonly Principal[],
  options: NewChannelOptions, authorizationErrorsFatal: boolean, sendNewSubscriptionMessages: boolean,
): Promise<WireResponse<'/users/me/subscriptions', 'post'>> {
  const names = subscriptions.map((s) => s.name);
  const [outcome, changes] = await subscriptionTurn(services, realm, {
    type: 'channel.subscribe',
    caller: { kind: 'user', userId: user.userId },
    channels: subscriptions.map((s) => ({ name: s.name, description: s.description ?? '' })),
    principals,
    authorizationErrorsFatal,
    options,
    ...(sendNewSubscriptionMessages ? { newSubscriptionMessages: { botDomain: botDomain(services, realm) } } : {}),
  }, (state) => subscribeOutcome(state, names, principals, user.userId));
  const { added, unauthorized, answer } = subscribeAnswer(outcome, changes);
  const result: WireResponse<'/users/me/subscriptions', 'post'> = { ...answer };
  if (!authorizationErrorsFatal) result.unauthorized = [...unauthorized];
  if (sendNewSubscriptionMessages) {
    // Told (by newSubscriptionNotices) unless the request subscribed more people than the bound.
    const told = new Set([...added].map((key) => Number(key.split(':')[1])).filter(outcome.notified));
    result.new_subscription_messages_sent = told.size <= MAX_BULK_NEW_SUBSCRIPTION_MESSAGES;
  }
  return result;
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
      const options = newChannelOptions(params, services.config.webPublicStreamsEnabled);
      return addSubscriptions(services, realm, user, params.subscriptions, principalsOrSelf(params.principals, user.userId), options, params.authorization_errors_fatal, params.send_new_subscription_messages);
    },
  }),

  route({
    method: 'GET',
    path: '/users/me/subscriptions',
    auth: 'user',
    params: { include_subscribers: includeSubscribers().default(false) },
    handle({ services, realm, user }, params) {
      const now = services.runtime.clock.now();
      const subscriptions = new ChannelViewList(realm, now, params.include_subscribers);
      for (const id of realm.subscribedBy.get(user.userId) ?? []) subscriptions.subscription(realm.channels.get(id)!, ownFields(realm.subscriptions.get(id)!.get(user.userId)!));
      return new PartsFields(['"subscriptions":', ...subscriptions.close()]);
    },
  }),

  route({
    method: 'DELETE',
    path: '/users/me/subscriptions',
    auth: 'user',
    params: { subscriptions: p.json(z.array(z.string())), principals: principals.optional() },
    async handle({ services, realm, user }, params) {
      const [outcome, changes] = await subscriptionTurn(services, realm, {
        type: 'channel.unsubscribe', caller: { kind: 'user', userId: user.userId }, channels: params.subscriptions, principals: principalsOrSelf(params.principals, user.userId),
      }, (state) => unsubscribeOutcome(state, params.subscriptions));
      return unsubscribeAnswer(outcome, changes) satisfies WireResponse<'/users/me/subscriptions', 'delete'>;
    },
  }),

  route({
    method: 'PATCH',
    path: '/users/me/subscriptions',
    auth: 'user',
    params: { add: p.json(subscriptionList).default([]), delete: p.json(z.array(z.string())).default([]) },
    async handle({ services, realm, user }, params) {
      if (!params.add.length && !params.delete.length) throw badRequest('Nothing to do. Specify at least one of "add" or "delete".');
      // The original's defaults for a channel this form creates: it takes no channel parameters.
      const options: NewChannelOptions = { inviteOnly: false, isWebPublic: false, messageRetentionDays: null, isDefault: false, permissions: {}, announce: false };
      const names = params.add.map((s) => s.name);
      const [outcome, changes] = await subscriptionTurn(services, realm, {
        type: 'channel.subscriptions_edit',
        caller: { kind: 'user', userId: user.userId },
        add: params.add.map((s) => ({ name: s.name, description: s.description ?? '' })),
        remove: params.delete,
        options,
      }, (state) => ({ added: subscribeOutcome(state, names, [user.userId], user.userId), removed: unsubscribeOutcome(state, params.delete) }));
      return { ...subscribeAnswer(outcome.added, changes).answer, ...unsubscribeAnswer(outcome.removed, changes) } satisfies WireResponse<'/users/me/subscriptions', 'patch'>;
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
      return {} satisfies WireResponse<'/users/me/subscriptions/properties', 'post'>;
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
      return { is_subscribed: realm.subscriptions.get(params.stream_id)?.has(params.user_id) ?? false } satisfies WireResponse<'/users/{user_id}/subscriptions/{stream_id}', 'get'>;
    },
  }),
];
