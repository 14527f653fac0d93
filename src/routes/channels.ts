import { z } from 'zod';
import { hasContentAccess } from '../../actors/realm/channels/decide.ts';
import { badRequest } from '../../actors/errors.ts';
import { channelKey, type Channel } from '../../actors/realm/channels/state.ts';
import { channelTopics, prepareChannelTopics } from '../../actors/realm/channels/activity.ts';
import { checkChannelEmailRequest } from '../../actors/realm/channels/email-address.ts';
import { canSeeChannel, channelView, subscriberIds } from '../../actors/realm/channels/views.ts';
import { ChannelViewList } from '../../actors/realm/channels/view-json.ts';
import { PartsFields } from '../http/envelope.ts';
import { EMPTY_TOPIC_DISPLAY_NAME } from '../../actors/register/realm-limits.ts';
import { isAdmin, type RealmState, type UserProfile } from '../../actors/realm/state.ts';
import { p } from '../http/params.ts';
import { channelPermissionParams, checkWebPublicEnabled, folderId, groupSetting, topicsPolicy, newChannelOptions, newChannelParams, pickChannelPermissions, retentionDays } from './channel-params.ts';
import { changeOf } from './change-of.ts';
import { route } from './route.ts';
import type { WireResponse } from '../../actors/wire/responses.ts';

const channelId = p.int(z.number().int());
const settingEdit = z.object({ new: groupSetting, old: groupSetting.optional() });

/** A channel the caller may see, or the error the original gives for one it may not. */
function visibleChannel(realm: RealmState, id: number, user: UserProfile): Channel {
  const channel = realm.channels.get(id);
  if (!channel || !canSeeChannel(realm, channel, user.userId)) throw badRequest('Invalid channel ID');
  return channel;
}

export const channelRoutes = [
  route({
    method: 'GET',
    path: '/streams',
    auth: 'user',
    params: {
      include_public: p.bool().default(true),
      include_web_public: p.bool().default(false),
      include_subscribed: p.bool().default(true),
      include_all_active: p.bool().default(false),
      include_all: p.bool().default(false),
      include_default: p.bool().default(false),
      include_owner_subscribed: p.bool().default(false),
      include_can_access_content: p.bool().default(false),
      exclude_archived: p.bool().default(true),
    },
    handle({ services, realm, user }, params) {
      if ((params.include_all_active || params.include_all) && !isAdmin(user)) throw badRequest('User not authorized for this query');
      const mine = realm.subscribedBy.get(user.userId) ?? new Set<number>();
      const now = services.runtime.clock.now();
      const streams = new ChannelViewList(realm, now, false);
      for (const channel of realm.channels.values()) {
        if (params.exclude_archived && channel.isArchived) continue;
        const wanted =
          params.include_all_active || params.include_all ||
          (params.include_public && !channel.inviteOnly && user.role !== 600) ||
          (params.include_web_public && channel.isWebPublic) ||
          (params.include_subscribed && mine.has(channel.id)) ||
          (params.include_default && channel.isDefault) ||
          (params.include_can_access_content && hasContentAccess(realm, channel, user.userId));
        // `is_default` only when asked for, as the original adds it.
        if (wanted) streams.channel(channel, params.include_default ? { is_default: channel.isDefault } : undefined);
      }
      return new PartsFields(['"streams":', ...streams.close()]);
    },
  }),

  route({
    method: 'GET',
    path: '/streams/{stream_id}',
    auth: 'user',
    params: { stream_id: channelId },
    handle({ services, realm, user }, params) {
      const channel = visibleChannel(realm, params.stream_id, user);
      return { stream: channelView(realm, channel, services.runtime.clock.now()) } satisfies WireResponse<'/streams/{stream_id}', 'get'>;
    },
  }),

  route({
    method: 'GET',
    path: '/get_stream_id',
    auth: 'user',
    params: { stream: p.string() },
    handle({ realm, user }, params) {
      const id = realm.channelIdByName.get(channelKey(params.stream));
      if (id === undefined || !canSeeChannel(realm, realm.channels.get(id)!, user.userId)) {
        throw badRequest(`Invalid channel name '${params.stream}'`);
      }
      return { stream_id: id } satisfies WireResponse<'/get_stream_id', 'get'>;
    },
  }),

  route({
    method: 'GET',
    path: '/streams/{stream_id}/members',
    auth: 'user',
    params: { stream_id: channelId },
    handle({ realm, user }, params) {
      return { subscribers: subscriberIds(realm, visibleChannel(realm, params.stream_id, user).id) } satisfies WireResponse<'/streams/{stream_id}/members', 'get'>;
    },
  }),

  route({
    method: 'GET',
    path: '/users/me/{stream_id}/topics',
    auth: 'user',
    params: { stream_id: channelId, allow_empty_topic_name: p.bool().default(false) },
    async handle({ realm, user }, params) {
      const channel = visibleChannel(realm, params.stream_id, user);
      await prepareChannelTopics(realm, channel.id);
      const topics = channelTopics(realm, channel.id, user.userId);
      if (!params.allow_empty_topic_name) for (const topic of topics) if (topic.name === '') topic.name = EMPTY_TOPIC_DISPLAY_NAME;
      return { topics } satisfies WireResponse<'/users/me/{stream_id}/topics', 'get'>;
    },
  }),

  route({
    method: 'POST',
    path: '/channels/create',
    auth: 'user',
    params: {
      name: p.string(),
      description: p.string().default(''),
      subscribers: p.json(z.array(z.number().int())),
      ...newChannelParams,
    },
    async handle({ services, realm, user }, params) {
      const changes = await services.runtime.execute(realm.realmId, {
        type: 'channel.subscribe',
        caller: { kind: 'user', userId: user.userId },
        channels: [{ name: params.name, description: params.description }],
        principals: params.subscribers,
        authorizationErrorsFatal: true,
        mustCreate: true,
        options: newChannelOptions(params, services.config.webPublicStreamsEnabled),
      });
      return { id: changeOf(changes, 'channel.created').channel.id } satisfies WireResponse<'/channels/create', 'post'>;
    },
  }),

  route({
    method: 'PATCH',
    path: '/streams/{stream_id}',
    auth: 'user',
    params: {
      stream_id: channelId,
      description: p.string().optional(),
      new_name: p.string().optional(),
      is_private: p.bool().optional(),
      is_web_public: p.bool().optional(),
      history_public_to_subscribers: p.bool().optional(),
      message_retention_days: retentionDays.optional(),
      is_archived: p.bool().optional(),
      is_default_stream: p.bool().optional(),
      folder_id: folderId.optional(),
      topics_policy: topicsPolicy.optional(),
      ...channelPermissionParams(settingEdit),
    },
    async handle({ services, realm, user }, params) {
      if (params.is_archived === true) throw badRequest('Use DELETE /streams/{stream_id} to archive a channel.');
      checkWebPublicEnabled(params.is_web_public, services.config.webPublicStreamsEnabled);
      const permissions = pickChannelPermissions(params);
      await services.runtime.execute(realm.realmId, {
        type: 'channel.update',
        caller: { kind: 'user', userId: user.userId },
        id: params.stream_id,
        name: params.new_name,
        description: params.description,
        inviteOnly: params.is_private,
        isWebPublic: params.is_web_public,
        historyPublicToSubscribers: params.history_public_to_subscribers,
        messageRetentionDays: params.message_retention_days,
        isArchived: params.is_archived,
        isDefault: params.is_default_stream,
        folderId: params.folder_id,
        topicsPolicy: params.topics_policy,
        permissions: Object.fromEntries(Object.entries(permissions).map(([name, edit]) => [name, edit.new])),
        expectedPermissions: Object.fromEntries(Object.entries(permissions).flatMap(([name, edit]) => (edit.old === undefined ? [] : [[name, edit.old]]))),
      });
      return {} satisfies WireResponse<'/streams/{stream_id}', 'patch'>;
    },
  }),

  route({
    method: 'DELETE',
    path: '/streams/{stream_id}',
    auth: 'user',
    params: { stream_id: channelId },
    async handle({ services, realm, user }, params) {
      await services.runtime.execute(realm.realmId, {
        type: 'channel.update', caller: { kind: 'user', userId: user.userId }, id: params.stream_id, isArchived: true, isDefault: false,
      });
      return {} satisfies WireResponse<'/streams/{stream_id}', 'delete'>;
    },
  }),

  route({
    method: 'POST',
    path: '/default_streams',
    auth: 'user',
    params: { stream_id: channelId },
    async handle({ services, realm, user }, params) {
      if (!isAdmin(user)) throw badRequest('Must be an organization administrator');
      await services.runtime.execute(realm.realmId, { type: 'channel.update', caller: { kind: 'user', userId: user.userId }, id: params.stream_id, isDefault: true });
      return {} satisfies WireResponse<'/default_streams', 'post'>;
    },
  }),

  route({
    method: 'DELETE',
    path: '/default_streams',
    auth: 'user',
    params: { stream_id: channelId },
    async handle({ services, realm, user }, params) {
      if (!isAdmin(user)) throw badRequest('Must be an organization administrator');
      await services.runtime.execute(realm.realmId, { type: 'channel.update', caller: { kind: 'user', userId: user.userId }, id: params.stream_id, isDefault: false });
      return {} satisfies WireResponse<'/default_streams', 'delete'>;
    },
  }),
  route({
    method: 'GET',
    path: '/streams/{stream_id}/email_address',
    auth: 'user',
    params: { stream_id: p.int(), sender_id: p.int().optional() },
    handle({ realm, user }, params) {
      checkChannelEmailRequest(realm, user.userId, params.stream_id, params.sender_id);
      // This server has no email gateway (mails to a channel); the original without one answers an empty address.
      return { email: '' } satisfies WireResponse<'/streams/{stream_id}/email_address', 'get'>;
    },
  }),
];
