import { z } from 'zod';
import { ChatError, ErrorCode, notAdmin } from '../../actors/errors.ts';
import { EXPORT_PUBLIC, type ExportType } from '../../actors/realm/exports/state.ts';
import { exportsView } from '../../actors/realm/exports/views.ts';
import { isAdmin } from '../../actors/realm/state.ts';
import { NotPrimary } from '../../actors/replication.ts';
import { settingValue } from '../../actors/user/settings.ts';
import { DirectResponse } from '../http/envelope.ts';
import { fileBody } from '../http/file-body.ts';
import { p } from '../http/params.ts';
import { exportFile } from '../realm-export-jobs.ts';
import { route } from './route.ts';
import type { WireResponse } from '../../actors/wire/responses.ts';

const adminsOnly = (user: Parameters<typeof isAdmin>[0]) => {
  if (!isAdmin(user)) throw notAdmin();
};

const fileNotFound = () => new ChatError(ErrorCode.BAD_REQUEST, 'File not found', 404);

/** Data exports of the organization, for its administrators. */
export const realmExportRoutes = [
  route({
    method: 'GET',
    path: '/export/realm',
    auth: 'user',
    authorize: adminsOnly,
    params: {},
    handle({ realm }) {
      return { exports: exportsView(realm) } satisfies WireResponse<'/export/realm', 'get'>;
    },
  }),

  // Asked for here, made in the background (src/realm-export-jobs.ts); `realm_export` events tell its progress.
  route({
    method: 'POST',
    path: '/export/realm',
    auth: 'user',
    authorize: adminsOnly,
    params: { export_type: p.int(z.union([z.literal(1), z.literal(2)])).default(EXPORT_PUBLIC) },
    async handle({ services, realm, user }, params) {
      const changes = await services.runtime.execute(realm.realmId, {
        type: 'realm_export.request',
        caller: { kind: 'user', userId: user.userId },
        exportType: params.export_type as ExportType,
        limit: services.config.realmExportLimit,
        supportAddress: services.config.ownerEmail,
      });
      const requested = changes.find((change) => change.type === 'realm_export.requested');
      if (requested?.type !== 'realm_export.requested') throw new Error('the export was not recorded');
      services.realmExports.start(realm.realmId, requested.entry.id);
      return { id: requested.entry.id } satisfies WireResponse<'/export/realm', 'post'>;
    },
  }),

  // The export file, to the organization's administrators (the API's `export_url`).
  route({
    method: 'GET',
    path: '/user_exports/{realm_id_str}/{dir}/{filename}',
    root: true,
    auth: 'user',
    authorize: adminsOnly,
    params: { realm_id_str: p.string(), dir: p.string(), filename: p.string() },
    async handle({ services, realm }, params) {
      const pathId = `${params.realm_id_str}/${params.dir}/${params.filename}`;
      if (!realm.exports.list.some((entry) => entry.pathId === pathId)) throw fileNotFound();
      // Read from disk as the client takes it: an export can be larger than the server's memory can spare.
      const stream = await fileBody(exportFile(services.config.dataDir, pathId));
      // In a cluster the primary, which ran the export, holds its file: a replica forwards the download there.
      if (!stream && services.cluster && !services.cluster.isPrimary()) throw new NotPrimary();
      if (!stream) throw fileNotFound();
      return new DirectResponse({
        status: 200,
        headers: {
          'Content-Type': 'application/octet-stream',
          'Content-Disposition': `attachment; filename*=UTF-8''${encodeURIComponent(params.filename)}`,
          'X-Content-Type-Options': 'nosniff',
          'Cache-Control': 'private, no-store',
        },
        body: '',
        stream,
      });
    },
  }),

  // Who lets administrators export their private data (the user setting `allow_private_data_export`).
  route({
    method: 'GET',
    path: '/export/realm/consents',
    auth: 'user',
    authorize: adminsOnly,
    params: {},
    handle({ services, realm }) {
      const people = [...realm.users.values()].filter((user) => user.isActive && !user.isBot);
      return {
        export_consents: people.map((user) => ({
          user_id: user.userId,
          consented: settingValue(services.runtime.userState(realm.realmId, user.userId).settings, 'allow_private_data_export') === true,
        })),
      } satisfies WireResponse<'/export/realm/consents', 'get'>;
    },
  }),
];
