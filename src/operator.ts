import { readFile } from 'node:fs/promises';
import type { ParseArgsConfig } from 'node:util';
import { z } from 'zod';
import { Role, ROLE_VALUES } from '../actors/realm/state.ts';
import { ConfigError, type Config } from './config.ts';
import { hashPassword, passwordWeakness } from './passwords.ts';
import { withRuntime } from './operator-runtime.ts';
import { dataDirCommands } from './operator-data.ts';
import { realmCommands } from './operator-realm.ts';

export interface OperatorCommand {
  summary: string;
  help: string;
  options: NonNullable<ParseArgsConfig['options']>;
  /** true: the command writes, so no server may be running on the directory */
  exclusive: boolean;
  run(config: Config, values: Record<string, string | boolean | undefined>, positionals: string[]): Promise<void>;
}


function required(values: Record<string, string | boolean | undefined>, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value.trim() === '') throw new ConfigError(`--${name} is required (see --help)`);
  return value.trim();
}

/** Where a command reads the new account's password when no file names it and the command line does not. */
const PASSWORD_VARIABLE = 'CHAT_PASSWORD';

/**
 * The password of the account a command makes: the first line of `--NAME-file FILE` (`-`: standard input),
 * or CHAT_PASSWORD, or `--NAME` itself, which still works but is readable by every user of the machine
 * (ps, /proc/PID/cmdline) and kept in shell history: a warning says so.
 */
async function passwordOption(values: Record<string, string | boolean | undefined>, name: string): Promise<string> {
  const file = values[`${name}-file`];
  if (typeof file === 'string') {
    const [line = ''] = (file === '-' ? await standardInput() : await readFile(file, 'utf8')).split(/\r?\n/, 1);
    if (line === '') throw new ConfigError(`no password in ${file === '-' ? 'standard input' : file}`);
    return line;
  }
  if (typeof values[name] === 'string') {
    console.error(`warning: a password given with --${name} can be read by other users of this machine and stays in shell history; ` +
      `use --${name}-file FILE ('-' for standard input) or ${PASSWORD_VARIABLE} instead`);
    return required(values, name);
  }
  const variable = process.env[PASSWORD_VARIABLE];
  if (variable) return variable;
  throw new ConfigError(`--${name}-file, ${PASSWORD_VARIABLE} or --${name} is required (see --help)`);
}

async function standardInput(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const passwordHelp = (name: string, whose: string) =>
  `  ${`--${name}-file FILE`.padEnd(21)} ${whose} password, the first line of FILE ('-': standard input); or set ${PASSWORD_VARIABLE}
  ${`--${name} PW`.padEnd(21)} the same on the command line (readable by other users of the machine: avoid)`;

async function checkedPasswordHash(password: string, inputs: string[]): Promise<string> {
  const weakness = await passwordWeakness(password, inputs);
  if (weakness) throw new ConfigError(weakness);
  return hashPassword(password);
}

const DATA_DIR_HELP = `  --data-dir DIR        the data directory (CHAT_DATA_DIR, default ./data); the server must not be running on it`;

const roles = Object.keys(Role) as (keyof typeof Role)[];

export const operatorCommands: Record<string, OperatorCommand> = {
  'create-realm': {
    summary: 'create an organization with its owner',
    exclusive: true,
    help: `Usage: chat-server create-realm --subdomain SUB --name NAME --owner-email EMAIL --owner-password-file FILE

Creates an organization served at SUB.<external host> ('' for the bare host) and its owner account.
  --subdomain SUB       lower-case letters, digits and dashes
  --name NAME           the organization's name
  --owner-email EMAIL   the owner's email (login)
${passwordHelp('owner-password', "the owner's")}
${DATA_DIR_HELP}`,
    options: {
      subdomain: { type: 'string' },
      name: { type: 'string' },
      'owner-email': { type: 'string' },
      'owner-password': { type: 'string' },
      'owner-password-file': { type: 'string' },
    },
    async run(config, values) {
      const subdomain = typeof values.subdomain === 'string' ? values.subdomain.trim().toLowerCase() : '';
      if (!/^([a-z0-9]([a-z0-9-]*[a-z0-9])?)?$/.test(subdomain)) throw new ConfigError(`invalid subdomain '${subdomain}'`);
      const name = required(values, 'name');
      const email = parseEmail(required(values, 'owner-email'));
      const passwordHash = await checkedPasswordHash(await passwordOption(values, 'owner-password'), [email, name]);
      await withRuntime(config, async (runtime) => {
        const realm = await runtime.createRealm(subdomain, name);
        await runtime.execute(realm.realmId, {
          type: 'user.create', caller: { kind: 'operator' }, email, fullName: 'Owner', passwordHash, role: Role.owner, canCreateUsers: true, canChangeUserEmails: true,
        });
        console.log(`Created organization "${name}" (subdomain '${subdomain}') with owner ${email}.`);
      });
    },
  },
  'create-user': {
    summary: 'create a user in an organization',
    exclusive: true,
    help: `Usage: chat-server create-user --email EMAIL --full-name NAME --password-file FILE [--role ROLE] [--subdomain SUB]

  --email EMAIL         the user's email (login)
  --full-name NAME      display name
${passwordHelp('password', "the user's")}
  --role ROLE           ${roles.join(', ')} (default member)
  --subdomain SUB       the organization (default: the one on the bare host)
  --can-create-users    may create users through the API (administrators only)
  --can-change-user-emails  may change other users' addresses through the API (PATCH /users/{id} new_email)
${DATA_DIR_HELP}`,
    options: {
      email: { type: 'string' },
      'full-name': { type: 'string' },
      password: { type: 'string' },
      'password-file': { type: 'string' },
      role: { type: 'string' },
      subdomain: { type: 'string' },
      'can-create-users': { type: 'boolean' },
      'can-change-user-emails': { type: 'boolean' },
    },
    async run(config, values) {
      const email = parseEmail(required(values, 'email'));
      const fullName = required(values, 'full-name');
      const roleName = (typeof values.role === 'string' ? values.role : 'member') as keyof typeof Role;
      const role = Role[roleName];
      if (!ROLE_VALUES.includes(role)) throw new ConfigError(`--role must be one of ${roles.join(', ')}`);
      const passwordHash = await checkedPasswordHash(await passwordOption(values, 'password'), [email, fullName]);
      const subdomain = typeof values.subdomain === 'string' ? values.subdomain : '';
      await withRuntime(config, async (runtime) => {
        const realm = runtime.realmByStringId(subdomain);
        if (!realm) throw new ConfigError(`no organization with subdomain '${subdomain}'`);
        const [change] = await runtime.execute(realm.realmId, {
          type: 'user.create', caller: { kind: 'operator' }, email, fullName, passwordHash, role,
          canCreateUsers: values['can-create-users'] === true,
          canChangeUserEmails: values['can-change-user-emails'] === true,
        });
        if (change?.type === 'user.created') console.log(`Created user ${email} (id ${change.user.userId}, ${roleName}).`);
      });
    },
  },
  ...dataDirCommands,
  ...realmCommands,
};

function parseEmail(text: string): string {
  const result = z.email().safeParse(text);
  if (!result.success) throw new ConfigError(`invalid email '${text}'`);
  return result.data;
}
