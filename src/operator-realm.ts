import { existsSync, readFileSync, writeFileSync, renameSync } from 'node:fs';
import { resolve } from 'node:path';
import type { RealmRecord } from '../actors/realm/state.ts';
import type { PersonalRecord } from '../actors/runtime.ts';
import { verifyRealm } from '../actors/verify.ts';
import { decode, encode, FORMAT_VERSION } from '../snapshots/codec.ts';
import { checkVersion } from '../snapshots/records.ts';
import { ConfigError } from './config.ts';
import type { OperatorCommand } from './operator.ts';
import { withRuntime } from './operator-runtime.ts';

/** What the export file says it is, so that import-realm refuses any other file. */
const EXPORT_KIND = 'chat-server realm export';

/**
 * The export file's own format version. Its records (realm, users) carry FORMAT_VERSION like snapshots do,
 * in `v`, and are read through the same version check, so a newer server imports an older export.
 */
const EXPORT_VERSION = 1;

/**
 * One organization in a portable file (msgpackr): the realm's record (users' profiles, groups, channels,
 * subscriptions, messages with their flags, settings, custom profile fields, attachment records) and each
 * user's personal state (settings, drafts, scheduled messages, snippets, topics, muted users, ...), in the
 * shapes snapshots use. Event queues are not exported (clients register again), nor presence (in memory
 * only), nor the uploaded files' bytes (see the note in import-realm's help).
 */
interface RealmExport {
  kind: typeof EXPORT_KIND;
  exportVersion: number;
  /** FORMAT_VERSION of the records inside */
  v: number;
  exportedAt: string;
  source: { stringId: string; name: string };
  realm: RealmRecord;
  users: PersonalRecord[];
}

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

function readExport(file: string): RealmExport {
  if (!existsSync(file)) throw new ConfigError(`no file at ${file}`);
  let data: Partial<RealmExport>;
  try {
    data = decode<Partial<RealmExport>>(readFileSync(file));
  } catch (error) {
    throw new ConfigError(`${file} is not a realm export (${error instanceof Error ? error.message : String(error)})`);
  }
  if (data?.kind !== EXPORT_KIND) throw new ConfigError(`${file} is not a realm export`);
  if (typeof data.exportVersion !== 'number' || data.exportVersion > EXPORT_VERSION) {
    throw new ConfigError(`${file} has export format ${String(data.exportVersion)}; this server reads up to ${EXPORT_VERSION}`);
  }
  checkVersion('realm export', data as { v: number });
  if (!data.realm || !Array.isArray(data.realm.users) || !Array.isArray(data.users)) throw new ConfigError(`${file} is incomplete`);
  return data as RealmExport;
}

const DATA_DIR_HELP = `  --data-dir DIR        the data directory (CHAT_DATA_DIR, default ./data); the server must not be running on it`;

export const realmCommands: Record<string, OperatorCommand> = {
  'export-realm': {
    summary: 'write one organization to a portable file',
    exclusive: true,
    help: `Usage: chat-server export-realm --out FILE [--subdomain SUB] [--data-dir DIR]

Writes one organization to FILE: its users, groups, channels, subscriptions, messages and their flags,
settings and custom profile fields, and every user's personal state (settings, drafts, scheduled messages,
snippets, topics, muted users). Event queues, presence and the bytes of uploaded files are not included.
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
      const exported = await withRuntime(config, (runtime) => {
        const realm = runtime.realmByStringId(subdomain);
        if (!realm) throw new ConfigError(`no organization with subdomain '${subdomain}'`);
        const { realm: record, users } = runtime.realmRecords(realm.realmId);
        return {
          kind: EXPORT_KIND, exportVersion: EXPORT_VERSION, v: FORMAT_VERSION, exportedAt: new Date().toISOString(),
          source: { stringId: realm.stringId, name: realm.name }, realm: record, users,
        } satisfies RealmExport;
      });
      // Written aside and renamed, so a crash never leaves a half file under the name asked for.
      const bytes = encode(exported);
      writeFileSync(`${out}.partial`, bytes, { flag: 'wx' });
      renameSync(`${out}.partial`, out);
      const messages = exported.realm.messages?.messages.length ?? 0;
      console.log(`Exported organization "${exported.source.name}" (subdomain '${subdomain}'): ${exported.realm.users.length} users, ` +
        `${exported.realm.channels.length} channels, ${messages} messages to ${out} (${bytes.length} bytes, ${Math.round(performance.now() - started)} ms)`);
    },
  },
  'import-realm': {
    summary: 'load an exported organization under a new subdomain',
    exclusive: true,
    help: `Usage: chat-server import-realm FILE --subdomain SUB [--name NAME] [--data-dir DIR]

Loads an organization written by 'chat-server export-realm' into the data directory as a new organization
served at SUB.<external host>, with its users able to log in with their passwords and API keys. Refused if
an organization already has that subdomain. Messages linking uploaded files keep their links, but the files
themselves are not part of an export.
  --subdomain SUB       the new organization's subdomain ('' for the bare host, if free)
  --name NAME           a new name for it (default: the exported one)
${DATA_DIR_HELP}`,
    options: { subdomain: { type: 'string' }, name: { type: 'string' } },
    async run(config, values, positionals) {
      if (!positionals[0]) throw new ConfigError('name the export file to import (see --help)');
      const file = resolve(positionals[0]);
      const subdomain = subdomainOption(values, true);
      const exported = readExport(file);
      const name = typeof values.name === 'string' && values.name.trim() ? values.name.trim() : exported.realm.name;
      const started = performance.now();
      const imported = await withRuntime(config, (runtime) => {
        if (runtime.realmByStringId(subdomain)) throw new ConfigError(`an organization with subdomain '${subdomain}' exists already`);
        const realm = runtime.adoptRealm(subdomain, { ...exported.realm, name }, exported.users);
        const problems = verifyRealm(realm);
        if (problems.length) throw new Error(`the imported organization fails verification:\n${problems.join('\n')}`);
        return realm;
      });
      console.log(`Imported organization "${imported.name}" from ${file} as subdomain '${subdomain}' (id ${imported.realmId}): ` +
        `${imported.users.size} users, ${imported.channels.size} channels, ${imported.messages.byId.size} messages in ${Math.round(performance.now() - started)} ms`);
    },
  },
};
