import { z } from 'zod';
import { badRequest, ChatError, ErrorCode } from '../../actors/errors.ts';
import type { UploadQuota } from '../../actors/realm/attachments/commands.ts';
import { canReadAttachment, checkUploadQuota, MAX_UPLOAD_BYTES, tooLarge } from '../../actors/realm/attachments/decide.ts';
import { attachmentsOf, attachmentView, uploadSpaceUsed } from '../../actors/realm/attachments/views.ts';
import type { Config } from '../config.ts';
import { DirectResponse } from '../http/envelope.ts';
import { p } from '../http/params.ts';
import { lowOnSpace } from '../disk-space.ts';
import type { UploadStore } from '../uploads.ts';
import type { RealmState } from '../../actors/realm/state.ts';
import { route } from './route.ts';
import type { WireResponse } from '../../actors/wire/responses.ts';

/**
 * What a multipart body holds beside the file: the boundaries and the part's headers, a long file name
 * included. Before the body is read, the file is taken to be the declared length less this.
 */
const FORM_FRAMING_BYTES = 8 * 1024;

export const uploadQuota = (config: Config): UploadQuota => ({
  userBytes: config.userUploadQuotaBytes, userFiles: config.userUploadFiles, realmBytes: config.realmUploadQuotaBytes,
});

const fileNotFound = () => new ChatError(ErrorCode.BAD_REQUEST, 'File not found', 404);

export const uploadRoutes = [
  route({
    method: 'POST',
    path: '/user_uploads',
    auth: 'user',
    files: true,
    params: {},
    // Before the body comes in: the declared length bounds the file, so an upload that cannot fit the
    // quota or the disk is refused without reading up to max_file_upload_size_mib of it.
    admit({ services, realm, user }, declaredBytes) {
      services.runtime.assertWritable();
      const refusal = services.diskSpace.uploadRefusal(declaredBytes ?? MAX_UPLOAD_BYTES);
      if (refusal !== null) throw lowOnSpace(refusal);
      checkUploadQuota(realm, user.userId, declaredBytes === null ? 0 : Math.max(0, declaredBytes - FORM_FRAMING_BYTES), uploadQuota(services.config));
    },
    async handle({ services, realm, user, files }) {
      if (files.length !== 1) throw badRequest(files.length ? 'You may only upload one file at a time' : 'You must specify a file to upload');
      const file = files[0]!;
      if (file.truncated) throw tooLarge();
      const size = file.data.length;
      const quota = uploadQuota(services.config);
      // Refused before the bytes go to a disk that may be short of space (the record would be refused anyway).
      services.runtime.assertWritable();
      checkUploadQuota(realm, user.userId, size, quota);
      const store = services.files.uploads;
      // The bytes are durable before the realm records them; a refused record takes them away again.
      const release = services.diskSpace.reserveUpload(size);
      let pathId: string;
      try {
        pathId = await store.save(realm.realmId, file.name, file.data);
      } finally {
        release();
      }
      try {
        await services.runtime.execute(realm.realmId, {
          type: 'attachment.upload', caller: { kind: 'user', userId: user.userId }, pathId, name: file.name || 'uploaded-file', size, quota,
        });
      } catch (error) {
        await store.remove(pathId);
        throw error;
      }
      const url = `/user_uploads/${pathId}`;
      return { uri: url, url, filename: file.name } satisfies WireResponse<'/user_uploads', 'post'>;
    },
  }),

  route({
    method: 'GET',
    path: '/attachments',
    auth: 'user',
    params: {},
    handle({ realm, user }) {
      return {
        attachments: attachmentsOf(realm, user.userId).map((attachment) => attachmentView(realm, attachment)),
        upload_space_used: uploadSpaceUsed(realm, user.userId),
      } satisfies WireResponse<'/attachments', 'get'>;
    },
  }),

  route({
    method: 'DELETE',
    path: '/attachments/{attachment_id}',
    auth: 'user',
    params: { attachment_id: p.int(z.number().int()) },
    async handle({ services, realm, user }, params) {
      const pathId = realm.attachments.byId.get(params.attachment_id)?.pathId;
      await services.runtime.execute(realm.realmId, { type: 'attachment.delete', caller: { kind: 'user', userId: user.userId }, attachmentId: params.attachment_id });
      // The record is gone (durably) before the bytes: a crash in between leaves an unreferenced file.
      if (pathId) await services.files.uploads.remove(pathId);
      return {} satisfies WireResponse<'/attachments/{attachment_id}', 'delete'>;
    },
  }),

  // The file itself, outside the API. Clients send their API credentials (Basic auth); the uploader and
  // whoever can read a message linking the file may fetch it, anyone else is told it does not exist.
  route({
    method: 'GET',
    path: '/user_uploads/{realm_id_str}/{dir}/{filename}',
    root: true,
    auth: 'user',
    params: { realm_id_str: p.string(), dir: p.string(), filename: p.string() },
    async handle({ services, realm, user }, params) {
      const attachment = readableAttachment(realm, user.userId, params);
      return fileResponse(services.files.uploads, attachment.pathId, attachment.name);
    },
  }),

  // The same file for a client that cannot send credentials where it opens it: a link that works alone, briefly.
  route({
    method: 'GET',
    path: '/user_uploads/{realm_id_str}/{dir}/{filename}',
    auth: 'user',
    params: { realm_id_str: p.string(), dir: p.string(), filename: p.string() },
    handle({ services, realm, user }, params) {
      const attachment = readableAttachment(realm, user.userId, params);
      const token = services.uploadLinks.issue(realm.realmId, attachment.pathId);
      return { url: `/user_uploads/temporary/${token}/${encodeURIComponent(params.filename)}` };
    },
  }),

  route({
    method: 'GET',
    path: '/user_uploads/temporary/{token}/{filename}',
    root: true,
    auth: 'public',
    params: { token: p.string(), filename: p.string() },
    async handle({ services, realm }, params) {
      const pathId = services.uploadLinks.redeem(params.token, realm.realmId);
      const id = pathId === null ? undefined : realm.attachments.byPathId.get(pathId);
      const attachment = id === undefined ? undefined : realm.attachments.byId.get(id);
      if (!attachment) throw fileNotFound();
      return fileResponse(services.files.uploads, attachment.pathId, attachment.name);
    },
  }),
];

/** The upload a path names, if the user may read it; otherwise it does not exist, as far as the user can tell. */
function readableAttachment(realm: RealmState, userId: number, params: { realm_id_str: string; dir: string; filename: string }) {
  if (params.realm_id_str !== String(realm.realmId)) throw fileNotFound();
  const id = realm.attachments.byPathId.get(`${params.realm_id_str}/${params.dir}/${params.filename}`);
  const attachment = id === undefined ? undefined : realm.attachments.byId.get(id);
  if (!attachment || !canReadAttachment(realm, userId, attachment)) throw fileNotFound();
  return attachment;
}

async function fileResponse(store: UploadStore, pathId: string, name: string): Promise<DirectResponse> {
  // Read from disk as the client takes it: many downloads of a large file at once hold a piece of it each.
  const stream = await store.open(pathId);
  if (!stream) throw fileNotFound();
  const type = contentType(name);
  const disposition = INLINE_TYPES.has(type) ? 'inline' : 'attachment';
  return new DirectResponse({
    status: 200,
    headers: {
      'Content-Type': type,
      'Content-Disposition': `${disposition}; filename*=UTF-8''${encodeURIComponent(name)}`,
      'X-Content-Type-Options': 'nosniff',
      'Content-Security-Policy': UPLOAD_CSP,
      'Cache-Control': 'private, max-age=86400',
    },
    body: '',
    stream,
  });
}

const TYPES: Record<string, string> = {
  png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp', bmp: 'image/bmp', avif: 'image/avif',
  svg: 'image/svg+xml', pdf: 'application/pdf', txt: 'text/plain', md: 'text/plain', csv: 'text/csv', json: 'application/json',
  mp4: 'video/mp4', webm: 'video/webm', mp3: 'audio/mpeg', ogg: 'audio/ogg', wav: 'audio/wav', zip: 'application/zip', html: 'text/html',
};

/**
 * Shown in the browser: media and plain text. Anything else is a download: an HTML or SVG file served inline
 * from this origin could run script with the viewer's session, and a PDF viewer runs the document's
 * JavaScript (and cannot work in the sandbox below).
 */
const INLINE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/bmp', 'image/avif', 'video/mp4', 'video/webm', 'audio/mpeg', 'audio/ogg', 'audio/wav', 'text/plain']);

/**
 * Whatever a browser makes of an uploaded file (a mistyped name, a sniffing browser, a file opened as a
 * document), it runs in a sandbox of its own origin with no script, no forms and nothing loaded from anywhere.
 */
const UPLOAD_CSP = "default-src 'none'; img-src 'self'; media-src 'self'; style-src 'unsafe-inline'; sandbox";

function contentType(name: string): string {
  const extension = /\.([a-z0-9]+)$/i.exec(name)?.[1]?.toLowerCase() ?? '';
  return TYPES[extension] ?? 'application/octet-stream';
}
