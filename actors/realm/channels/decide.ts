import { badRequest, ChatError, ErrorCode } from '../../errors.ts';
import { renderMarkdown } from '../../markdown.ts';
import { LIMITS } from '../../register/realm-limits.ts';
import type { Caller } from '../commands.ts';
import type { Clock, DecideContext } from '../decide.ts';
import { DEFAULT_REALM_LIMITS, requireRealmRoom } from '../limits.ts';
import { settingIncludes, type GroupSetting } from '../groups/state.ts';
import { checkFolderForChannel } from '../channel-folders/decide.ts';
import { checkTopicsPolicy } from './topics-policy.ts';
import { channelIdsByName, resolvePrincipals } from './principals.ts';
import { disallowedNameCharacter } from '../names.ts';
import { allowed, systemGroupId } from '../permissions.ts';
import { MODERATION_CHANNEL_PUBLIC } from '../settings/decide.ts';
import { isAdmin, Role, type RealmState } from '../state.ts';
import type { ChannelChange, ChannelFields } from './changes.ts';
import type { ChannelCommand } from './commands.ts';
import { channelKey, defaultProperties, SUBSCRIPTION_COLORS, type Channel, type ChannelPermission, type SubscriptionProperties } from './state.ts';

type Subscribe = Extract<ChannelCommand, { type: 'channel.subscribe' }>;

export function decideChannel(state: RealmState, command: ChannelCommand, clock: DecideContext): ChannelChange[] {
  switch (command.type) {
    case 'channel.subscribe':
      return decideSubscribe(state, command, clock);
    case 'channel.unsubscribe': {
      // An unknown user is the request's error before an unknown channel, as the front end answered it before.
      const actor = callerId(command.caller);
      const userIds = resolvePrincipals(state, command.principals, actor);
      return decideUnsubscribe(state, actor, channelIdsByName(state, command.channels), userIds);
    }
    case 'channel.subscriptions_edit':
      return decideSubscriptionsEdit(state, command, clock);
    case 'channel.update':
      return decideUpdate(state, command);
    case 'subscription.properties': {
      for (const entry of command.entries) {
        requireChannel(state, entry.channelId);
        if (!state.subscriptions.get(entry.channelId)?.has(command.userId)) throw badRequest(`Not subscribed to channel ID ${entry.channelId}`);
      }
      return [{ type: 'subscription.properties_set', userId: command.userId, entries: command.entries }];
    }
  }
}

const callerId = (caller: Caller) => (caller.kind === 'user' ? caller.userId : null);

/** May the caller act as this channel's administrator? */
export function administers(state: RealmState, channel: Channel, userId: number | null): boolean {
  if (userId === null) return true;
  const user = state.users.get(userId);
  return !!user && (isAdmin(user) || settingIncludes(state, channel.permissions.can_administer_channel_group, userId));
}

/** May the caller subscribe other users to the channel (invitations check it too)? */
export function mayAddOthers(state: RealmState, channel: Channel, userId: number | null): boolean {
  if (administers(state, channel, userId)) return true;
  const id = userId!;
  if (settingIncludes(state, channel.permissions.can_add_subscribers_group, id)) return true;
  return !channel.inviteOnly && allowed(state, 'can_add_subscribers_group', id);
}

function maySubscribeSelf(state: RealmState, channel: Channel, userId: number | null): boolean {
  if (userId === null || administers(state, channel, userId)) return true;
  if (!channel.inviteOnly) return state.users.get(userId)?.role !== Role.guest;
  return settingIncludes(state, channel.permissions.can_subscribe_group, userId) || settingIncludes(state, channel.permissions.can_add_subscribers_group, userId);
}

/**
 * Whether the user may read the channel's messages, now or by subscribing on its own (the original's
 * content access): web-public and subscribed channels, public ones for all but guests, private ones for the
 * members of their subscribe and add-subscribers groups.
 */
export function hasContentAccess(state: RealmState, channel: Channel, userId: number): boolean {
  if (channel.isWebPublic || state.subscriptions.get(channel.id)?.has(userId)) return true;
  if (state.users.get(userId)?.role === Role.guest) return false;
  if (!channel.inviteOnly) return true;
  return settingIncludes(state, channel.permissions.can_subscribe_group, userId) || settingIncludes(state, channel.permissions.can_add_subscribers_group, userId);
}

export function checkChannelName(state: RealmState, name: string, except?: number): string {
  const trimmed = name.trim();
  if (!trimmed) throw badRequest('Channel name cannot be blank.');
  if (trimmed.length > LIMITS.max_stream_name_length) throw badRequest(`Channel name too long (limit: ${LIMITS.max_stream_name_length} characters).`);
  const invalid = disallowedNameCharacter(trimmed);
  if (invalid >= 0) throw badRequest(`Invalid character in channel name, at position ${invalid + 1}.`);
  const existing = state.channelIdByName.get(channelKey(trimmed));
  if (existing !== undefined && existing !== except) throw new ChatError(ErrorCode.BAD_REQUEST, `Channel '${trimmed}' already exists`, 400);
  return trimmed;
}

export function checkDescription(description: string): string {
  if (description.length > LIMITS.max_stream_description_length) {
    throw badRequest(`Channel description too long (limit: ${LIMITS.max_stream_description_length} characters).`);
  }
  return description.replace(/\s*\n\s*/g, ' ').trim();
}

/**
 * PATCH /users/me/subscriptions: the removals named first, then the additions, then the removals (commands.ts).
 * A channel both added and removed is only removed: one commit cannot hold a subscription's addition and its
 * removal (their events are made from the state after both), and removing it is where the two end.
 */
function decideSubscriptionsEdit(state: RealmState, command: Extract<ChannelCommand, { type: 'channel.subscriptions_edit' }>, clock: DecideContext): ChannelChange[] {
  const removeIds = channelIdsByName(state, command.remove);
  const removing = new Set(removeIds);
  const { caller, options } = command;
  const add = command.add.filter((channel) => !removing.has(state.channelIdByName.get(channelKey(channel.name)) ?? -1));
  const added = add.length === 0 ? [] : decideSubscribe(state, {
    type: 'channel.subscribe', caller, channels: add, principals: [caller.userId], options, authorizationErrorsFatal: true,
  }, clock);
  return [...added, ...decideUnsubscribe(state, caller.userId, removeIds, [caller.userId])];
}

function decideSubscribe(state: RealmState, command: Subscribe, clock: DecideContext): ChannelChange[] {
  const actor = callerId(command.caller);
  const userIds = resolvePrincipals(state, command.principals, actor);
  const othersIncluded = userIds.some((id) => id !== actor);
  const changes: ChannelChange[] = [];
  const entries: Extract<ChannelChange, { type: 'subscriptions.added' }>['entries'] = [];
  const colorsTaken = new Map<number, Set<string>>();
  let nextId = state.nextChannelId;
  const seen = new Set<string>();
  for (const requested of command.channels) {
    const key = channelKey(requested.name);
    if (seen.has(key)) continue;
    seen.add(key);
    const existingId = state.channelIdByName.get(key);
    let channel: Channel;
    if (existingId === undefined) {
      // Archived channels count: they are kept.
      requireRealmRoom('channels', state.channels.size + (nextId - state.nextChannelId), (clock.limits ?? DEFAULT_REALM_LIMITS).channels);
      channel = newChannel(state, command, userIds, requested, nextId++, actor, clock);
      changes.push({ type: 'channel.created', channel });
    } else {
      if (command.mustCreate) throw badRequest(`Channel '${requested.name.trim()}' already exists`);
      channel = state.channels.get(existingId)!;
      if (channel.isArchived) throw badRequest(`Channel '${channel.name}' is archived.`);
      const authorized = othersIncluded ? mayAddOthers(state, channel, actor) && (!userIds.includes(actor ?? -1) || maySubscribeSelf(state, channel, actor)) : maySubscribeSelf(state, channel, actor);
      if (!authorized) {
        if (command.authorizationErrorsFatal) throw badRequest(`Unable to access channel (${channel.name}).`);
        continue;
      }
    }
    for (const userId of userIds) {
      if (state.subscriptions.get(channel.id)?.has(userId)) continue;
      entries.push({ channelId: channel.id, userId, properties: defaultProperties(colorFor(state, colorsTaken, userId, channel.id)) });
    }
  }
  if (entries.length) changes.push({ type: 'subscriptions.added', entries });
  return changes;
}

/**
 * A web-public channel needs the realm's spectator access on (the server's own switch is the front end's to
 * check), and is public.
 */
function checkWebPublic(state: RealmState, inviteOnly: boolean): void {
  if (!state.settings.enable_spectator_access) throw badRequest('Web-public channels are not enabled.');
  if (inviteOnly) throw badRequest('A web-public channel cannot be private.');
}

function newChannel(state: RealmState, command: Subscribe, userIds: readonly number[], requested: { name: string; description: string }, id: number, actor: number | null, clock: Clock): Channel {
  const name = checkChannelName(state, requested.name);
  const description = checkDescription(requested.description);
  const { options } = command;
  if (options.isWebPublic) checkWebPublic(state, options.inviteOnly);
  checkFolderForChannel(state, options.folderId ?? null);
  if (options.topicsPolicy !== undefined) checkTopicsPolicy(state, actor, options.topicsPolicy);
  if (actor !== null) {
    const permission = options.isWebPublic ? 'can_create_web_public_channel_group' : options.inviteOnly ? 'can_create_private_channel_group' : 'can_create_public_channel_group';
    if (!allowed(state, permission, actor)) throw new ChatError(ErrorCode.UNAUTHORIZED_PRINCIPAL, 'Insufficient permission');
    if (userIds.some((userId) => userId !== actor) && !allowed(state, 'can_add_subscribers_group', actor)) {
      throw new ChatError(ErrorCode.UNAUTHORIZED_PRINCIPAL, 'Insufficient permission');
    }
    if (options.messageRetentionDays !== null && state.users.get(actor)?.role !== Role.owner) {
      throw badRequest('Must be an organization owner');
    }
  }
  const empty = { direct_members: [], direct_subgroups: [] };
  return {
    id,
    name,
    description,
    renderedDescription: renderMarkdown(description),
    dateCreated: Math.floor(clock.now() / 1000),
    creatorId: actor,
    inviteOnly: options.inviteOnly,
    isWebPublic: options.isWebPublic,
    // Spectators read a web-public channel's whole history, so its subscribers do too.
    historyPublicToSubscribers: options.isWebPublic || (options.historyPublicToSubscribers ?? !options.inviteOnly),
    messageRetentionDays: options.messageRetentionDays,
    isArchived: false,
    isDefault: options.isDefault,
    firstMessageId: null,
    folderId: options.folderId ?? null,
    topicsPolicy: options.topicsPolicy ?? 'inherit',
    permissions: {
      can_add_subscribers_group: empty,
      can_remove_subscribers_group: systemGroupId(state, 'role:administrators'),
      can_administer_channel_group: { direct_members: actor === null ? [] : [actor], direct_subgroups: [] },
      can_send_message_group: systemGroupId(state, 'role:everyone'),
      can_subscribe_group: empty,
      can_delete_any_message_group: systemGroupId(state, 'role:nobody'),
      can_delete_own_message_group: systemGroupId(state, 'role:nobody'),
      can_move_messages_out_of_channel_group: systemGroupId(state, 'role:nobody'),
      can_move_messages_within_channel_group: systemGroupId(state, 'role:nobody'),
      can_resolve_topics_group: systemGroupId(state, 'role:nobody'),
      ...options.permissions,
    },
  };
}

function colorFor(state: RealmState, taken: Map<number, Set<string>>, userId: number, channelId: number): string {
  let used = taken.get(userId);
  if (!used) {
    used = new Set();
    for (const id of state.subscribedBy.get(userId) ?? []) used.add(state.subscriptions.get(id)!.get(userId)!.color);
    taken.set(userId, used);
  }
  const previous = state.unsubscribedBy.get(userId)?.get(channelId)?.color;
  const color = previous ?? SUBSCRIPTION_COLORS.find((c) => !used.has(c)) ?? SUBSCRIPTION_COLORS[channelId % SUBSCRIPTION_COLORS.length]!;
  used.add(color);
  return color;
}

function decideUnsubscribe(state: RealmState, actor: number | null, channelIds: readonly number[], userIds: readonly number[]): ChannelChange[] {
  const entries: { channelId: number; userId: number }[] = [];
  for (const channelId of channelIds) {
    const channel = requireChannel(state, channelId);
    const others = userIds.some((id) => id !== actor);
    if (others && !administers(state, channel, actor) && !settingIncludes(state, channel.permissions.can_remove_subscribers_group, actor!)) {
      throw new ChatError(ErrorCode.UNAUTHORIZED_PRINCIPAL, 'Insufficient permission');
    }
    for (const userId of userIds) if (state.subscriptions.get(channelId)?.has(userId)) entries.push({ channelId, userId });
  }
  return entries.length ? [{ type: 'subscriptions.removed', entries }] : [];
}

function decideUpdate(state: RealmState, command: Extract<ChannelCommand, { type: 'channel.update' }>): ChannelChange[] {
  const current = state.channels.get(command.id);
  for (const [name, old] of Object.entries(command.expectedPermissions ?? {}) as [ChannelPermission, GroupSetting][]) {
    if (current && JSON.stringify(old) !== JSON.stringify(current.permissions[name])) throw badRequest("'old' value does not match the expected value.");
  }
  const channel = requireChannel(state, command.id, true);
  const actor = callerId(command.caller);
  if (!administers(state, channel, actor)) throw new ChatError(ErrorCode.UNAUTHORIZED_PRINCIPAL, 'You do not have permission to administer this channel.');
  if (channel.isArchived && command.isArchived !== false) throw badRequest(`Channel '${channel.name}' is archived.`);
  const fields: ChannelFields = {};
  if (command.name !== undefined && command.name.trim() !== channel.name) fields.name = checkChannelName(state, command.name, channel.id);
  if (command.description !== undefined) {
    const description = checkDescription(command.description);
    if (description !== channel.description) {
      fields.description = description;
      fields.renderedDescription = renderMarkdown(description);
    }
  }
  if (command.inviteOnly !== undefined && command.inviteOnly !== channel.inviteOnly) fields.inviteOnly = command.inviteOnly;
  if (command.historyPublicToSubscribers !== undefined && command.historyPublicToSubscribers !== channel.historyPublicToSubscribers) {
    fields.historyPublicToSubscribers = command.historyPublicToSubscribers;
  }
  if (command.isWebPublic === true && !channel.isWebPublic) {
    checkWebPublic(state, command.inviteOnly ?? false);
    if (actor !== null && !allowed(state, 'can_create_web_public_channel_group', actor)) throw new ChatError(ErrorCode.UNAUTHORIZED_PRINCIPAL, 'Insufficient permission');
    fields.isWebPublic = true;
    if (channel.inviteOnly) fields.inviteOnly = false;
    if (!channel.historyPublicToSubscribers) fields.historyPublicToSubscribers = true;
  } else if (command.isWebPublic === false && channel.isWebPublic) {
    fields.isWebPublic = false;
  } else if (fields.inviteOnly === true && channel.isWebPublic) {
    // A channel made private is no longer readable by spectators.
    fields.isWebPublic = false;
  }
  if (fields.inviteOnly === false && state.settings.moderation_request_channel_id === channel.id) throw badRequest(MODERATION_CHANNEL_PUBLIC);
  // A public channel's history is always public to its subscribers.
  if ((fields.inviteOnly ?? channel.inviteOnly) === false && (fields.historyPublicToSubscribers ?? channel.historyPublicToSubscribers) === false) {
    fields.historyPublicToSubscribers = true;
  }
  if (command.messageRetentionDays !== undefined && command.messageRetentionDays !== channel.messageRetentionDays) {
    if (actor !== null && state.users.get(actor)?.role !== Role.owner) throw badRequest('Must be an organization owner');
    fields.messageRetentionDays = command.messageRetentionDays;
  }
  if (command.isArchived !== undefined && command.isArchived !== channel.isArchived) fields.isArchived = command.isArchived;
  if (command.isDefault !== undefined && command.isDefault !== channel.isDefault) {
    if (command.isDefault && channel.inviteOnly) throw badRequest('Private channels cannot be made default.');
    fields.isDefault = command.isDefault;
  }
  if (command.topicsPolicy !== undefined && command.topicsPolicy !== (channel.topicsPolicy ?? 'inherit')) {
    checkTopicsPolicy(state, actor, command.topicsPolicy, channel);
    fields.topicsPolicy = command.topicsPolicy;
  }
  if (command.folderId !== undefined && command.folderId !== (channel.folderId ?? null)) {
    checkFolderForChannel(state, command.folderId);
    fields.folderId = command.folderId;
  }
  if (command.permissions && Object.keys(command.permissions).length) fields.permissions = command.permissions;
  return Object.keys(fields).length ? [{ type: 'channel.updated', id: channel.id, fields }] : [];
}

export function requireChannel(state: RealmState, id: number, allowArchived = true): Channel {
  const channel = state.channels.get(id);
  if (!channel || (channel.isArchived && !allowArchived)) throw badRequest('Invalid channel ID');
  return channel;
}

export type { SubscriptionProperties };
