import type { WireEventOf, WireSchema } from '../../wire/events.ts';
import type { ApiEvent, Delivery } from '../../events.ts';
import { Role } from '../roles.ts';
import type { RealmState } from '../state.ts';
import { accessLostDeliveries } from '../user-access.ts';
import type { ChannelChange } from './changes.ts';
import type { Channel } from './state.ts';
import { canSeeChannel, channelView, ownFields, PROPERTY_NAMES, seesUnsubscribed, subscriberIds, subscriptionOf } from './views.ts';

/** The users who may see a channel: every active user for a public one, subscribers and admins otherwise. */
function viewers(state: RealmState, channel: Channel, except: Set<number> = new Set()): number[] {
  const out: number[] = [];
  for (const user of state.users.values()) {
    if (user.isActive && !except.has(user.userId) && canSeeChannel(state, channel, user.userId)) out.push(user.userId);
  }
  return out;
}

type StreamUpdate = WireEventOf<'stream', 'update'>;

const API_FIELD: Record<string, string> = {
  name: 'name', description: 'description', inviteOnly: 'invite_only', isWebPublic: 'is_web_public',
  historyPublicToSubscribers: 'history_public_to_subscribers', messageRetentionDays: 'message_retention_days', isArchived: 'is_archived', folderId: 'folder_id', topicsPolicy: 'topics_policy',
};

export function channelEvents(state: RealmState, change: ChannelChange, now: number): Delivery[] {
  const to = (userIds: number[], event: ApiEvent): Delivery[] =>
    userIds.length ? [{ realmId: state.realmId, audience: { kind: 'users', userIds }, event }] : [];
  switch (change.type) {
    case 'channel.created': {
      const channel = state.channels.get(change.channel.id)!;
      return to(viewers(state, channel), { type: 'stream', op: 'create', streams: [channelView(state, channel, now)] });
    }
    case 'channel.updated': {
      const channel = state.channels.get(change.id)!;
      const audience = viewers(state, channel);
      const out: Delivery[] = [];
      const update = (property: string, value: StreamUpdate['value'], extra: Pick<StreamUpdate, 'rendered_description'> = {}) =>
        out.push(...to(audience, { type: 'stream', op: 'update', stream_id: channel.id, name: channel.name, property, value, ...extra }));
      for (const [field, value] of Object.entries(change.fields)) {
        if (field === 'permissions') {
          for (const [permission, setting] of Object.entries(change.fields.permissions ?? {})) update(permission, setting);
        } else if (field === 'description') {
          update('description', channel.description, { rendered_description: channel.renderedDescription });
        } else if (field === 'isDefault') {
          // Their ids since feature level 330, as at registration.
          const defaults = [...state.channels.values()].filter((c) => c.isDefault && !c.isArchived).map((c) => c.id);
          out.push({ realmId: state.realmId, audience: { kind: 'realm' }, event: { type: 'default_streams', default_streams: defaults } satisfies WireEventOf<'default_streams'> });
        } else if (API_FIELD[field] && typeof value !== 'object') {
          update(API_FIELD[field], value);
        } else if (API_FIELD[field] && value === null) {
          update(API_FIELD[field], null);
        }
      }
      return out;
    }
    case 'subscriptions.added': {
      const out: Delivery[] = [];
      // Each new subscriber's view carries the channel's view and subscribers: made once per channel and shared
      // by all the views (a list per view made adding everyone to a channel quadratic: 49 s and 3.5 GB at 20,000 users).
      const shared = new Map<number, { channel: WireSchema<'BasicChannel'>; subscribers: number[] }>();
      const sharedOf = (channelId: number) => {
        let found = shared.get(channelId);
        if (!found) shared.set(channelId, (found = { channel: channelView(state, state.channels.get(channelId)!, now), subscribers: subscriberIds(state, channelId) }));
        return found;
      };
      // Newcomers whose views are the same (the same channels, each with the same color and settings: most of
      // them when many are added at once) get one event, serialized once. An event per newcomer, each with the
      // channel's whole subscriber list, took 6 s and 500 MB of heap to add 10,000 online users to a channel.
      const alike = new Map<string, { userIds: number[]; entries: typeof change.entries }>();
      for (const [userId, entries] of groupBy(change.entries, (entry) => entry.userId)) {
        const key = entries.map((entry) => `${entry.channelId}${JSON.stringify(ownFields(state.subscriptions.get(entry.channelId)!.get(userId)!))}`).join();
        const group = alike.get(key);
        if (group) group.userIds.push(userId);
        else alike.set(key, { userIds: [userId], entries });
      }
      for (const { userIds, entries } of alike.values()) {
        const views = entries.map((entry) => {
          const { channel, subscribers } = sharedOf(entry.channelId);
          return subscriptionOf(channel, state.subscriptions.get(entry.channelId)!.get(entry.userId)!, subscribers);
        });
        out.push(...to(userIds, { type: 'subscription', op: 'add', subscriptions: views }));
      }
      out.push(...peerEvents(state, change.entries, 'peer_add'));
      return out;
    }
    case 'subscriptions.removed': {
      const out: Delivery[] = [];
      for (const [userId, entries] of groupBy(change.entries, (entry) => entry.userId)) {
        const subscriptions = entries.map((entry) => ({ stream_id: entry.channelId, name: state.channels.get(entry.channelId)!.name }));
        out.push(...to([userId], { type: 'subscription', op: 'remove', subscriptions } satisfies WireEventOf<'subscription', 'remove'>));
        // A private channel the user may no longer see at all is gone from its clients.
        const lost = subscriptions.filter((subscription) => !canSeeChannel(state, state.channels.get(subscription.stream_id)!, userId));
        if (lost.length) out.push(...to([userId], { type: 'stream', op: 'delete', stream_ids: lost.map((channel) => channel.stream_id), streams: lost } satisfies WireEventOf<'stream', 'delete'>));
      }
      out.push(...peerEvents(state, change.entries, 'peer_remove'));
      out.push(...accessLostDeliveries(state, change.entries));
      return out;
    }
    case 'subscription.properties_set': {
      const out: Delivery[] = [];
      for (const entry of change.entries) {
        for (const [apiName, stored] of Object.entries(PROPERTY_NAMES)) {
          if (!(stored in entry.properties)) continue;
          const value = entry.properties[stored];
          // A change sets colors and booleans; `null` (inherit the user's setting) is only ever a starting value.
          if (value === undefined || value === null) continue;
          out.push(...to([change.userId], { type: 'subscription', op: 'update', stream_id: entry.channelId, property: apiName, value }));
          // Muting is announced under both names: clients still read the legacy inverse.
          if (apiName === 'is_muted') {
            out.push(...to([change.userId], { type: 'subscription', op: 'update', stream_id: entry.channelId, property: 'in_home_view', value: !value } satisfies WireEventOf<'subscription', 'update'>));
          }
        }
      }
      return out;
    }
  }
}

/**
 * `peer_add` or `peer_remove`: each channel's changed users, told to every active user who may see the
 * channel but them. A public channel is seen by every active member and its subscribed guests, a private
 * one by administrators and its subscribers. The channels of each kind with the same changed users share
 * one event to those who see every channel of that kind (`stream_ids` lists them), made from the members
 * (or administrators) listed once; a subscriber who sees a channel only as one (a guest, a member in a
 * private channel) gets an event of its own with its channels. Every user checked for each channel took
 * 2.5-3.1 s when one member of 10,000 joined or left 2,500 channels, and told each user as many events.
 */
function peerEvents(state: RealmState, entries: readonly { userId: number; channelId: number }[], op: 'peer_add' | 'peer_remove'): Delivery[] {
  type Kind = 'public' | 'private';
  const seeing: Partial<Record<Kind, number[]>> = {};
  const activeSeeing = (kind: Kind) =>
    (seeing[kind] ??= [...state.users.values()].filter((user) => user.isActive && seesUnsubscribed(kind === 'private', user.role)).map((user) => user.userId));
  let guests: number[] | undefined;
  /** by kind and changed users: the channels, for those who see every channel of the kind */
  const shared = new Map<string, { kind: Kind; userIds: number[]; except: Set<number>; streamIds: number[] }>();
  /** by viewer who sees some only as a subscriber, then by changed users: those channels */
  const own = new Map<number, Map<string, { userIds: number[]; streamIds: number[] }>>();
  for (const [channelId, changed] of groupBy(entries, (entry) => entry.channelId)) {
    const kind: Kind = state.channels.get(channelId)!.inviteOnly ? 'private' : 'public';
    const userIds = changed.map((entry) => entry.userId);
    const changedKey = userIds.join();
    let group = shared.get(`${kind}|${changedKey}`);
    if (!group) shared.set(`${kind}|${changedKey}`, (group = { kind, userIds, except: new Set(userIds), streamIds: [] }));
    group.streamIds.push(channelId);
    // The subscribers who see it only as subscribers: for a public channel its guests, found from the
    // organization's guests when they are fewer than its subscribers.
    const subscribers = state.subscriptions.get(channelId);
    let candidates: Iterable<number> = subscribers?.keys() ?? [];
    if (kind === 'public') {
      guests ??= [...state.users.values()].filter((user) => user.role === Role.guest).map((user) => user.userId);
      if (guests.length < (subscribers?.size ?? 0)) candidates = guests.filter((id) => subscribers!.has(id));
    }
    for (const viewerId of candidates) {
      const viewer = state.users.get(viewerId);
      if (!viewer || !viewer.isActive || group.except.has(viewerId) || seesUnsubscribed(kind === 'private', viewer.role)) continue;
      let mine = own.get(viewerId);
      if (!mine) own.set(viewerId, (mine = new Map()));
      let channels = mine.get(changedKey);
      if (!channels) mine.set(changedKey, (channels = { userIds, streamIds: [] }));
      channels.streamIds.push(channelId);
    }
  }
  const out: Delivery[] = [];
  const tell = (userIds: number[], streamIds: number[], changed: number[]) => {
    const event = { type: 'subscription', op, stream_ids: streamIds, user_ids: changed } satisfies WireEventOf<'subscription', typeof op>;
    if (userIds.length) out.push({ realmId: state.realmId, audience: { kind: 'users', userIds }, event });
  };
  for (const { kind, userIds, except, streamIds } of shared.values()) tell(activeSeeing(kind).filter((id) => !except.has(id)), streamIds, userIds);
  for (const [viewerId, mine] of own) for (const { userIds, streamIds } of mine.values()) tell([viewerId], streamIds, userIds);
  return out;
}

function groupBy<T, K>(items: readonly T[], key: (item: T) => K): Map<K, T[]> {
  const out = new Map<K, T[]>();
  for (const item of items) {
    const k = key(item);
    let list = out.get(k);
    if (!list) out.set(k, (list = []));
    list.push(item);
  }
  return out;
}
