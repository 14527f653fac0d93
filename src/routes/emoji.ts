import { z } from 'zod';
import { badRequest, ChatError, ErrorCode } from '../../actors/errors.ts';
import { checkEmojiUpload } from '../../actors/realm/emoji/decide.ts';
import { realmEmojiView } from '../../actors/realm/emoji/views.ts';
import { emojiCodeToNames } from '../../actors/realm/messages/emoji.ts';
import type { RealmState } from '../../actors/realm/state.ts';
import { DirectResponse } from '../http/envelope.ts';
import { p } from '../http/params.ts';
import { IMAGE_TYPES, inspectImage } from '../images.ts';
import { route } from './route.ts';
import type { WireResponse } from '../../actors/wire/responses.ts';

/** The original's default MAX_EMOJI_FILE_SIZE_MIB. */
export const MAX_EMOJI_FILE_SIZE_MIB = 5;

const imageNotFound = () => new ChatError(ErrorCode.BAD_REQUEST, 'File not found', 404);

/** Where clients read the Unicode emoji this server knows (the registration's `server_emoji_data_url`). */
export const EMOJI_DATA_PATH = '/emoji-data.json';

export const emojiRoutes = [
  route({
    method: 'GET',
    path: EMOJI_DATA_PATH,
    root: true,
    auth: 'optional',
    params: {},
    handle: () =>
      new DirectResponse({
        status: 200,
        headers: { 'Content-Type': 'application/json', 'Cache-Control': 'public, max-age=3600' },
        body: JSON.stringify({ code_to_names: emojiCodeToNames() }),
      }),
  }),

  // The list is public to the organization: members, guests and bots alike.
  route({
    method: 'GET',
    path: '/realm/emoji',
    auth: 'user',
    params: {},
    handle: ({ realm }) => ({ emoji: realmEmojiView(realm) }) satisfies WireResponse<'/realm/emoji', 'get'>,
  }),

  route({
    method: 'POST',
    path: '/realm/emoji/{emoji_name}',
    auth: 'user',
    files: true,
    params: { emoji_name: p.string() },
    async handle({ services, realm, user, files }, params) {
      // Refused names and callers are refused before any bytes are stored; deciding checks again.
      const name = checkEmojiUpload(realm, user, params.emoji_name, services.config.realmLimits.customEmoji);
      if (files.length !== 1) throw badRequest('You must upload exactly one file.');
      const file = files[0]!;
      if (file.truncated || file.data.length > MAX_EMOJI_FILE_SIZE_MIB * 1024 * 1024) {
        throw badRequest(`Uploaded file is larger than the allowed limit of ${MAX_EMOJI_FILE_SIZE_MIB} MiB`);
      }
      const image = inspectImage(file.data);
      if (!image) throw badRequest('Invalid image format');
      // Refused before the bytes go to a disk that may be short of space (the record would be refused anyway).
      services.runtime.assertWritable();
      const store = services.files.emoji;
      const stored = await store.save(realm.realmId, image, file.data);
      try {
        await services.runtime.execute(realm.realmId, { type: 'emoji.add', caller: { kind: 'user', userId: user.userId }, name, ...stored });
      } catch (error) {
        await store.remove(realm.realmId, stored);
        throw error;
      }
      return {} satisfies WireResponse<'/realm/emoji/{emoji_name}', 'post'>;
    },
  }),

  route({
    method: 'DELETE',
    path: '/realm/emoji/{emoji_name}',
    auth: 'user',
    params: { emoji_name: p.string() },
    async handle({ services, realm, user }, params) {
      await services.runtime.execute(realm.realmId, { type: 'emoji.deactivate', caller: { kind: 'user', userId: user.userId }, name: params.emoji_name });
      return {} satisfies WireResponse<'/realm/emoji/{emoji_name}', 'delete'>;
    },
  }),

  // The images, outside the API and without credentials, as the original serves them: browsers load them
  // in <img> tags. Only files a custom emoji of the host's realm uses are served.
  ...[false, true].map((still) =>
    route({
      method: 'GET',
      path: `/user_avatars/{realm_id_str}/emoji/images/${still ? 'still/' : ''}{file_name}`,
      root: true,
      auth: 'public',
      anonymousBudget: false,
      params: { realm_id_str: p.string(), file_name: p.string(z.string().max(100)) },
      async handle({ services, realm }, params) {
        if (params.realm_id_str !== String(realm.realmId) || !usesFile(realm, params.file_name, still)) throw imageNotFound();
        const stream = await services.files.emoji.open(realm.realmId, params.file_name, still);
        if (!stream) throw imageNotFound();
        const extension = params.file_name.slice(params.file_name.lastIndexOf('.') + 1);
        return new DirectResponse({
          status: 200,
          headers: {
            'Content-Type': IMAGE_TYPES[extension] ?? 'application/octet-stream',
            'X-Content-Type-Options': 'nosniff',
            // A file name is never reused for other bytes.
            'Cache-Control': 'public, max-age=31536000, immutable',
          },
          body: '',
          stream,
        });
      },
    }),
  ),
];

function usesFile(realm: RealmState, fileName: string, still: boolean): boolean {
  for (const emoji of realm.emoji.byId.values()) if ((still ? emoji.stillFileName : emoji.fileName) === fileName) return true;
  return false;
}
