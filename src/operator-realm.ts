import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { realmRecordExcess, type Excess } from '../actors/realm/record-limits.ts';
import { verifyRealm } from '../actors/verify.ts';
import { FORMAT_VERSION } from '../snapshots/codec.ts';
import { BOUND_VARIABLES, ConfigError, recordBounds } from './config.ts';
import type { OperatorCommand } from './operator.ts';
import { withRuntime } from './operator-runtime.ts';
import { EXPORT_KIND, EXPORT_VERSION, openExportFile, writeExportFile, type RealmExport } from './realm-export-file.ts';
import { moveFileLinks } from './realm-file-links.ts';
import { holdsCredentials, newOwnerLogins, writeOwnerZuliprcs, type OwnerLogin } from './realm-import-credentials.ts';
import { configuredExternalUrl, realmUrl } from './bootstrap.ts';
import { emojiPaths, RealmFiles } from './realm-files.ts';

const SUBDOMAIN = /^([a-z0-9]([a-z0-9-]*[a-z0-9])?)?$/;


function subdomainOption(values: Record<string, string | boolean | undefined>, required: boolean): string {
  const value = values.subdomain;
  if (typeof value !== 'string') {
    if (required) throw new ConfigError('--subdomain is required (see --help)');
    return '';
  }
  const subdomain = value.trim().toLowerCase();
  if (!SUBDOMAIN.test(subdomain)) throw new ConfigError(`invalid subdomain '${value}'`);
  return subdomain;
}

/** How many files an export's records name (uploads, avatars, emoji images), whether it holds them or not. */
function filesNamed(header: RealmExport): number {
  const avatars = header.realm.users.filter((user) => user.avatarPathId).length;
  return (header.realm.attachments?.attachments.length ?? 0) + avatars + emojiPaths(header.realm).length;
}

/** The refusal of an export past this server's bounds: every kind exceeded, its count, its bound and what raises it. */
function beyondBounds(excess: readonly Excess[]): ConfigError {
  const lines = excess.map(({ what, count, limit, bound, holder }) =>
    `  ${holder ?? 'it'} has ${count} ${what} and may have at most ${limit} (${bound ? `raise ${BOUND_VARIABLES[bound]}` : "this server's own bound"})`);
  return new ConfigError(`the exported organization is larger than this server lets an organization be; nothing was imported:\n${lines.join('\n')}`);
}

const DATA_DIR_HELP = `  --data-dir DIR        the data directory (CHAT_DATA_DIR, default ./data); the server must not be running on it`;

export const realmCommands: Record<string, OperatorCommand> = {
  'deactivate-realm': {
    summary: 'close an organization: nobody may log in or use its API any more; its data stays',
    exclusive: true,
    help: `Usage: chat-server deactivate-realm --subdomain SUB [--data-dir DIR]

Deactivates the organization, as its owner can through POST /api/v1/realm/deactivate: every request of its
users then answers 401 (REALM_DEACTIVATED), and it is no longer served; its data stays in the directory.
  --subdomain SUB       the organization ('' for the one on the bare host)
${DATA_DIR_HELP}`,
    options: { subdomain: { type: 'string' } },
    async run(config, values) {
      const subdomain = subdomainOption(values, true);
      await withRuntime(config, async (runtime) => {
        const realm = runtime.realmByStringId(subdomain);
        if (!realm) throw new ConfigError(`no organization with subdomain '${subdomain}'`);
        await runtime.execute(realm.realmId, { type: 'realm.deactivate', caller: { kind: 'operator' } });
        console.log(`Deactivated organization "${realm.name}" (subdomain '${subdomain}').`);
      });
    },
  },
  'export-realm': {
    summary: 'write one organization, with its files, to a portable file',
    exclusive: true,
    help: `Usage: chat-server export-realm --out FILE [--subdomain SUB] [--data-dir DIR]

Writes one organization to FILE: its users, groups, channels, subscriptions, messages and their flags,
settings and custom profile fields, every user's personal state (settings, drafts, scheduled messages,
snippets, topics, muted users), its uploaded files, avatars and custom emoji images. Event queues and
presence are not included.
Load it into a data directory with 'chat-server import-realm FILE --subdomain NEW'.
  --out FILE            the file to write (refused if it exists)
  --subdomain SUB       the organization (default: the one on the bare host)
${DATA_DIR_HELP}`,
    options: { out: { type: 'string' }, subdomain: { type: 'string' } },
    async run(config, values) {
      const out = typeof values.out === 'string' && values.out.trim() ? resolve(values.out) : null;
      if (!out) throw new ConfigError('--out is required (see --help)');
      if (existsSync(out)) throw new ConfigError(`${out} exists already`);
      const subdomain = subdomainOption(values, false);
      const started = performance.now();
      const files = new RealmFiles(config.dataDir);
      const header = await withRuntime(config, async (runtime) => {
        const realm = runtime.realmByStringId(subdomain);
        if (!realm) throw new ConfigError(`no organization with subdomain '${subdomain}'`);
        const { realm: record, users } = runtime.realmRecords(realm.realmId);
        const { uploads, avatars, emojiImages, missing } = await files.list(record);
        return {
          kind: EXPORT_KIND, exportVersion: EXPORT_VERSION, v: FORMAT_VERSION, exportedAt: new Date().toISOString(),
          source: { stringId: realm.stringId, name: realm.name }, realm: record, users, uploads, avatars, emojiImages, missingFiles: missing,
        } satisfies RealmExport;
      });
      const bytes = await writeExportFile(out, header, async (kind, path) => {
        const data = await files.read(header.realm.realmId, kind, path);
        if (!data) throw new Error(`the file ${path} went missing while exporting`);
        return data;
      });
      const messages = header.realm.messages?.messages.length ?? 0;
      console.log(`Exported organization "${header.source.name}" (subdomain '${subdomain}'): ${header.realm.users.length} users, ` +
        `${header.realm.channels.length} channels, ${messages} messages, ${header.uploads.length} uploaded files, ` +
        `${header.avatars.length} avatars, ${header.emojiImages.length} emoji images to ${out} (${bytes} bytes, ${Math.round(performance.now() - started)} ms)`);
      if (header.missingFiles.length) {
        console.log(`${header.missingFiles.length} files the records name were already missing in ${config.dataDir}: ${header.missingFiles.join(', ')}`);
      }
    },
  },
  'import-realm': {
    summary: 'load an exported organization under a new subdomain',
    exclusive: true,
    help: `Usage: chat-server import-realm FILE --subdomain SUB [--name NAME] [--data-dir DIR]

Loads an organization written by 'chat-server export-realm' into the data directory as a new organization
served at SUB.<external host>, with its users able to log in with their passwords and API keys and its
uploaded files, avatars and custom emoji served again (their URLs, and the links to them in messages,
name the new organization). Refused if an organization already has that subdomain, or, before anything is
written, if it holds more of a bounded kind than this server allows (CHAT_MAX_*): accounts, channels, user
groups, custom emoji, usable invitations, linkifiers, channel folders, sign-up domains, default channel
groups; any user's bots, saved snippets, drafts, scheduled messages, reminders, alert words, topic policies,
push tokens or navigation views; any message's submessages; and the fixed bounds on profile fields,
playgrounds, push devices and a message's different reactions. Files exported by older versions
hold no files: the records come, the files are missing. An export made through the API (POST /export/realm)
holds no passwords or API keys: each active owner gets new ones, the password shown once and the API key
written to a zuliprc file in the data directory (zuliprc-SUB-USERID), and lets the others in.
  --subdomain SUB       the new organization's subdomain ('' for the bare host, if free)
  --name NAME           a new name for it (default: the exported one)
${DATA_DIR_HELP}`,
    options: { subdomain: { type: 'string' }, name: { type: 'string' } },
    async run(config, values, positionals) {
      if (!positionals[0]) throw new ConfigError('name the export file to import (see --help)');
      const file = resolve(positionals[0]);
      const subdomain = subdomainOption(values, true);
      const reader = openExportFile(file);
      const files = new RealmFiles(config.dataDir);
      let written = 0;
      let newRealmId: number | null = null;
      const started = performance.now();
      try {
        const { header } = reader;
        const excess = realmRecordExcess(header, recordBounds(config), Date.now());
        if (excess.length) throw beyondBounds(excess);
        const name = typeof values.name === 'string' && values.name.trim() ? values.name.trim() : header.realm.name;
        const logins: OwnerLogin[] = holdsCredentials(header) ? [] : await newOwnerLogins(header.realm);
        const imported = await withRuntime(config, async (runtime) => {
          if (runtime.realmByStringId(subdomain)) throw new ConfigError(`an organization with subdomain '${subdomain}' exists already`);
          const realmId = runtime.nextRealmId();
          newRealmId = realmId;
          const destination = moveFileLinks(header.realm, header.users, realmId);
          // The files first, durably: a recorded attachment, avatar or emoji always has its bytes (as for an upload).
          for (const { kind, path, data } of reader.files()) {
            const target = destination(kind, path);
            if (!target) throw new ConfigError(`${file} holds the file ${path}, which nothing of the organization names`);
            await files.write(realmId, kind, target, data);
            written++;
          }
          const realm = runtime.adoptRealm(subdomain, { ...header.realm, name }, header.users);
          if (realm.realmId !== realmId) throw new Error(`the organization got id ${realm.realmId}, not ${realmId}`);
          const problems = verifyRealm(realm);
          if (problems.length) throw new Error(`the imported organization fails verification:\n${problems.join('\n')}`);
          return realm;
        });
        console.log(`Imported organization "${imported.name}" from ${file} as subdomain '${subdomain}' (id ${imported.realmId}): ` +
          `${imported.users.size} users, ${imported.channels.size} channels, ${imported.messages.byId.size} messages, ` +
          `${written} files in ${Math.round(performance.now() - started)} ms`);
        const without = filesNamed(header) - written;
        if (without > 0) console.log(`${without} files the records name were not in the export; fetching them answers 404`);
        if (!holdsCredentials(header)) {
          const paths = await writeOwnerZuliprcs(config.dataDir, subdomain, realmUrl(configuredExternalUrl(config), subdomain), logins);
          console.log(`The export holds no passwords or API keys: its users have none that anybody knows. Each owner has new ones:`);
          logins.forEach((login, i) => console.log(`  ${login.email} (id ${login.userId}): password (shown once) ${login.password}; client configuration (zuliprc): ${paths[i]}`));
          if (!logins.length) console.log('  (none: the organization has no active owner)');
        }
      } catch (error) {
        // Nothing recorded them: the files of a failed import go again (the organization's id is new, so its
        // folder holds only what this import wrote, or an earlier failed one).
        if (newRealmId !== null) await files.removeRealm(newRealmId);
        throw error;
      } finally {
        reader.close();
      }
    },
  },
};
