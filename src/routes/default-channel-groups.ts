import { z } from 'zod';
import { p } from '../http/params.ts';
import { route } from './route.ts';

const groupId = p.int(z.number().int());
const channelNames = p.json(z.array(z.string()));

/** Groups of default channels: administrators make, rename, fill and delete them; registration lists them. */
export const defaultChannelGroupRoutes = [
  route({
    method: 'POST',
    path: '/default_stream_groups/create',
    auth: 'user',
    params: { group_name: p.string(), description: p.string(), stream_names: channelNames },
    async handle({ services, realm, user }, params) {
      await services.runtime.execute(realm.realmId, {
        type: 'default_channel_group.create', caller: { kind: 'user', userId: user.userId }, name: params.group_name, description: params.description,
        channelNames: params.stream_names, maxGroups: services.config.maxDefaultChannelGroups,
      });
      return {};
    },
  }),

  route({
    method: 'PATCH',
    path: '/default_stream_groups/{group_id}',
    auth: 'user',
    params: { group_id: groupId, new_group_name: p.string().optional(), new_description: p.string().optional() },
    async handle({ services, realm, user }, params) {
      await services.runtime.execute(realm.realmId, {
        type: 'default_channel_group.update', caller: { kind: 'user', userId: user.userId }, id: params.group_id,
        name: params.new_group_name, description: params.new_description,
      });
      return {};
    },
  }),

  route({
    method: 'PATCH',
    path: '/default_stream_groups/{group_id}/streams',
    auth: 'user',
    params: { group_id: groupId, op: p.string(z.enum(['add', 'remove'])), stream_names: channelNames },
    async handle({ services, realm, user }, params) {
      await services.runtime.execute(realm.realmId, {
        type: 'default_channel_group.channels', caller: { kind: 'user', userId: user.userId }, id: params.group_id, op: params.op, channelNames: params.stream_names,
      });
      return {};
    },
  }),

  route({
    method: 'DELETE',
    path: '/default_stream_groups/{group_id}',
    auth: 'user',
    params: { group_id: groupId },
    async handle({ services, realm, user }, params) {
      await services.runtime.execute(realm.realmId, { type: 'default_channel_group.delete', caller: { kind: 'user', userId: user.userId }, id: params.group_id });
      return {};
    },
  }),
];
