import { z } from 'zod';
import { channelFoldersView } from '../../actors/realm/channel-folders/views.ts';
import { p } from '../http/params.ts';
import { changeOf } from './change-of.ts';
import { route } from './route.ts';
import type { WireResponse } from '../../actors/wire/responses.ts';

/** Channel folders: administrators create, edit, archive and order them; everyone reads them. */
export const channelFolderRoutes = [
  route({
    method: 'POST',
    path: '/channel_folders/create',
    auth: 'user',
    params: { name: p.string(), description: p.string().default('') },
    async handle({ services, realm, user }, params) {
      const changes = await services.runtime.execute(realm.realmId, {
        type: 'channel_folder.create', caller: { kind: 'user', userId: user.userId },
        name: params.name, description: params.description, maxFolders: services.config.maxChannelFoldersPerRealm,
      });
      return { channel_folder_id: changeOf(changes, 'channel_folder.created').folder.id } satisfies WireResponse<'/channel_folders/create', 'post'>;
    },
  }),

  route({
    method: 'GET',
    path: '/channel_folders',
    auth: 'user',
    params: { include_archived: p.bool().default(false) },
    handle: ({ realm }, params) => ({ channel_folders: channelFoldersView(realm.channelFolders, params.include_archived) }) satisfies WireResponse<'/channel_folders', 'get'>,
  }),

  route({
    method: 'PATCH',
    path: '/channel_folders',
    auth: 'user',
    params: { order: p.json(z.array(z.number().int())) },
    async handle({ services, realm, user }, params) {
      await services.runtime.execute(realm.realmId, { type: 'channel_folders.reorder', caller: { kind: 'user', userId: user.userId }, order: params.order });
      return {} satisfies WireResponse<'/channel_folders', 'patch'>;
    },
  }),

  route({
    method: 'PATCH',
    path: '/channel_folders/{channel_folder_id}',
    auth: 'user',
    params: { channel_folder_id: p.int(z.number().int()), name: p.string().optional(), description: p.string().optional(), is_archived: p.bool().optional() },
    async handle({ services, realm, user }, params) {
      await services.runtime.execute(realm.realmId, {
        type: 'channel_folder.update', caller: { kind: 'user', userId: user.userId }, id: params.channel_folder_id,
        name: params.name, description: params.description, isArchived: params.is_archived,
      });
      return {} satisfies WireResponse<'/channel_folders/{channel_folder_id}', 'patch'>;
    },
  }),
];
