import { z } from 'zod';
import { badRequest, ChatError, ErrorCode } from '../../actors/errors.ts';
import { checkAvatarChangeAllowed } from '../../actors/realm/avatars/decide.ts';
import { fullAvatarUrl, mediumAvatarUrl } from '../../actors/realm/avatars/urls.ts';
import type { RealmState, UserProfile } from '../../actors/realm/state.ts';
import { avatarContentType, avatarFormat, defaultAvatarSvg, isValidInitials, MAX_AVATAR_BYTES } from '../avatars.ts';
import { DirectResponse } from '../http/envelope.ts';
import type { BodyStream } from '../http/request.ts';
import { p } from '../http/params.ts';
import type { AppServices } from '../services.ts';
import { route, type RouteContext } from './route.ts';
import { lookUp } from './users.ts';

const notFound = () => new ChatError(ErrorCode.BAD_REQUEST, 'Not Found', 404);

/**
 * Commits the user's new avatar (an image already stored, or null for the default), then removes the image
 * it replaced. The previous image is read just before the command is decided, with no await in between, so
 * two changes in flight each remove the one they replaced.
 */
async function setAvatar(services: AppServices, realm: RealmState, user: UserProfile, pathId: string | null): Promise<UserProfile> {
  const previous = realm.users.get(user.userId)?.avatarPathId;
  await services.runtime.execute(realm.realmId, { type: 'avatar.set', caller: { kind: 'user', userId: user.userId }, userId: user.userId, pathId });
  // The record no longer names the old image (durably) before its bytes go: a crash in between leaves an unused file.
  if (previous && previous !== pathId) await services.files.avatars.remove(previous);
  return realm.users.get(user.userId)!;
}

/** The user an avatar request names: by id or by email, the realm's notification bot included. */
function avatarOwner(realm: RealmState, viewer: UserProfile, idOrEmail: string): UserProfile {
  const bot = realm.notificationBot;
  if (bot && (idOrEmail === String(bot.userId) || idOrEmail.toLowerCase() === bot.email.toLowerCase())) return bot;
  return lookUp(realm, viewer, idOrEmail);
}

/** GET /avatar/{user}: a redirect to where the picture is, on the realm's URL; never cached (it moves). */
function redirectToAvatar({ services, realm, user: viewer }: RouteContext<'user'>, user: string, medium: boolean): DirectResponse {
  const owner = avatarOwner(realm, viewer, user);
  const target = medium ? mediumAvatarUrl(owner) : fullAvatarUrl(owner);
  return new DirectResponse({
    status: 302,
    headers: { Location: `${services.realmUrl(realm)}${target}`, 'Cache-Control': 'private, no-cache', 'Content-Type': 'text/plain; charset=utf-8' },
    body: '',
  });
}

/** An avatar's bytes: public (an <img> sends no credentials), immutable (a new avatar gets a new path). */
function image(contentType: string, body: { body: string; stream?: BodyStream }): DirectResponse {
  return new DirectResponse({
    status: 200,
    headers: {
      'Content-Type': contentType,
      'Cache-Control': 'public, max-age=31536000, immutable',
      'X-Content-Type-Options': 'nosniff',
      // Opened on its own, the picture may run nothing and load nothing.
      'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; sandbox",
    },
    ...body,
  });
}

// The original serves GET /avatar/{user} at the site root (for <img> tags) and the API documents it too.
const avatarRedirects = [false, true].flatMap((root) => [
  route({
    method: 'GET',
    path: '/avatar/{user}',
    root,
    auth: 'user',
    params: { user: p.string(), medium: p.string().optional() },
    handle: (context, params) => redirectToAvatar(context, params.user, params.medium !== undefined),
  }),
  route({
    method: 'GET',
    path: '/avatar/{user}/medium',
    root,
    auth: 'user',
    params: { user: p.string() },
    handle: (context, params) => redirectToAvatar(context, params.user, true),
  }),
]);

export const avatarRoutes = [
  route({
    method: 'POST',
    path: '/users/me/avatar',
    auth: 'user',
    files: true,
    params: {},
    async handle({ services, realm, user, files }) {
      if (files.length !== 1) throw badRequest('You must upload exactly one avatar.');
      checkAvatarChangeAllowed(realm, user);
      const file = files[0]!;
      if (file.truncated || file.data.length > MAX_AVATAR_BYTES) {
        throw badRequest(`Uploaded file is larger than the allowed limit of ${MAX_AVATAR_BYTES / 1024 / 1024} MiB`);
      }
      const format = avatarFormat(file.data);
      if (!format) throw badRequest('Could not decode image; did you upload an image file?');
      // Refused before the bytes go to a disk that may be short of space (the record would be refused anyway).
      services.runtime.assertWritable();
      const store = services.files.avatars;
      // The bytes are durable before the realm records them; a refused change takes them away again.
      const pathId = await store.save(realm.realmId, `avatar.${format.extension}`, file.data);
      let updated: UserProfile;
      try {
        updated = await setAvatar(services, realm, user, pathId);
      } catch (error) {
        await store.remove(pathId);
        throw error;
      }
      return { avatar_url: fullAvatarUrl(updated) };
    },
  }),

  route({
    method: 'DELETE',
    path: '/users/me/avatar',
    auth: 'user',
    params: {},
    async handle({ services, realm, user }) {
      checkAvatarChangeAllowed(realm, user);
      return { avatar_url: fullAvatarUrl(await setAvatar(services, realm, user, null)) };
    },
  }),

  ...avatarRedirects,

  // The default picture, drawn from its path alone (realm/avatars/urls.ts).
  route({
    method: 'GET',
    path: '/user_avatars/default/{user_id}/{file}',
    root: true,
    auth: 'public',
    anonymousBudget: false,
    params: { user_id: p.int(z.number().int().positive()), file: p.string() },
    handle(_context, params) {
      const initials = /^(.+)\.svg$/u.exec(params.file)?.[1];
      if (initials === undefined || !isValidInitials(initials)) throw notFound();
      return image('image/svg+xml', { body: defaultAvatarSvg(params.user_id, initials) });
    },
  }),

  // An uploaded avatar. Its path holds 144 random bits: known only to those the server told.
  route({
    method: 'GET',
    path: '/user_avatars/{realm_id_str}/{dir}/{filename}',
    root: true,
    auth: 'public',
    anonymousBudget: false,
    params: { realm_id_str: p.string(), dir: p.string(), filename: p.string() },
    async handle({ services, realm }, params) {
      const type = avatarContentType(params.filename);
      const wellFormed = /^[\w-]+$/.test(params.dir) && /^[\w-]+\.[a-z]+$/.test(params.filename);
      if (params.realm_id_str !== String(realm.realmId) || !type || !wellFormed) throw notFound();
      const stream = await services.files.avatars.open(`${params.realm_id_str}/${params.dir}/${params.filename}`);
      if (!stream) throw notFound();
      return image(type, { body: '', stream });
    },
  }),
];
