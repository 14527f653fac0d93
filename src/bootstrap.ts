import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomString } from '../actors/ids.ts';
import { Role, type RealmState, type UserProfile } from '../actors/realm/state.ts';
import type { Runtime } from '../actors/runtime.ts';
import { hashPassword } from './passwords.ts';
import type { Config } from './config.ts';
import type { AppServices } from './services.ts';

export const DEFAULT_REALM_NAME = 'Chat';

const STARTER_DESCRIPTIONS: Record<string, string> = {
  general: 'For everyone: every new member joins this channel.',
  sandbox: 'A place to try things out.',
};

/**
 * First start on an empty data directory: create the default organization (on the bare host) with an
 * owner account, and write a client configuration in the zuliprc format for it. Returns that file's path.
 */
export async function bootstrap(services: AppServices, announce: (line: string) => void): Promise<string> {
  const { runtime, config, log } = services;
  const zuliprc = join(config.dataDir, 'zuliprc');
  if (runtime.realms.size > 0) {
    if (await refreshZuliprc(zuliprc, runtime, services.realmUrl)) announce(`Client configuration (zuliprc): ${zuliprc}`);
    return zuliprc;
  }
  const realm = await runtime.createRealm('', DEFAULT_REALM_NAME);
  const password = config.ownerPassword ?? randomString(20);
  const [change] = await runtime.execute(realm.realmId, {
    type: 'user.create',
    caller: { kind: 'operator' },
    email: config.ownerEmail,
    fullName: 'Owner',
    passwordHash: await hashPassword(password),
    role: Role.owner,
    canCreateUsers: true,
    canChangeUserEmails: true,
  });
  if (change?.type !== 'user.created') throw new Error('could not create the owner account');
  if (config.starterChannels.length) {
    await runtime.execute(realm.realmId, {
      type: 'channel.subscribe',
      caller: { kind: 'user', userId: change.user.userId },
      channels: config.starterChannels.map((name) => ({ name, description: STARTER_DESCRIPTIONS[name.toLowerCase()] ?? '' })),
      principals: [change.user.userId],
      options: { inviteOnly: false, isWebPublic: false, messageRetentionDays: null, isDefault: true, permissions: {} },
      authorizationErrorsFatal: true,
      mustCreate: true,
    });
  }
  await writeZuliprc(zuliprc, change.user.email, change.user.apiKey, services.realmUrl(realm));
  log.info({ realm: realm.name, owner: change.user.email }, 'created the default organization');
  announce(`Created organization "${realm.name}" with owner ${change.user.email}.`);
  if (!config.ownerPassword) announce(`Owner password (shown once): ${password}`);
  announce(`Client configuration (zuliprc): ${zuliprc}`);
  return zuliprc;
}

/** The host the server answers on locally: a wildcard listen address is reached at the loopback one. */
export const listenHostOf = (config: Pick<Config, 'host'>): string => (config.host === '0.0.0.0' ? '127.0.0.1' : config.host);

/**
 * The external URL as configured; without one, the server's own address (its port as configured: one the
 * server picks when it listens replaces it there, and the server rewrites the zuliprc).
 */
export const configuredExternalUrl = (config: Pick<Config, 'externalUrl' | 'host' | 'port'>): URL =>
  new URL(config.externalUrl ?? `http://${listenHostOf(config)}:${config.port}`);

/** Where an organization is served: its subdomain of the external URL's host ('' for the bare host). */
export function realmUrl(external: URL, stringId: string): string {
  const url = new URL(external.href);
  if (stringId) url.hostname = `${stringId}.${url.hostname}`;
  return url.origin;
}

/** The host an organization is served at: the domain of its stand-in addresses (realm/email-visibility.ts). */
export const realmHost = (external: URL, stringId: string): string => new URL(realmUrl(external, stringId)).hostname;

/**
 * Keeps the client configuration of an existing data directory current (a restored one, or one served at
 * another external URL since): the account it names (or, if that is gone, the bare host's organization's
 * first active owner) with that account's current API key, at the URL its organization is served at now.
 * Written only when that differs from the file. Returns whether a zuliprc is there.
 */
export async function refreshZuliprc(path: string, runtime: Runtime, realmUrl: (realm: RealmState) => string): Promise<boolean> {
  const current = existsSync(path) ? await readFile(path, 'utf8') : null;
  const named = current ? /^email=(.*)$/m.exec(current)?.[1]?.trim().toLowerCase() : undefined;
  const realms = runtime.realmStates().filter((realm) => !realm.deactivated).sort((a, b) => Number(a.stringId !== '') - Number(b.stringId !== '') || a.realmId - b.realmId);
  const active = (realm: RealmState) => [...realm.users.values()].filter((user) => user.isActive && !user.isBot);
  let chosen: { realm: RealmState; user: UserProfile } | null = null;
  for (const realm of realms) {
    const user = active(realm).find((candidate) => candidate.email.toLowerCase() === named);
    if (user) {
      chosen = { realm, user };
      break;
    }
  }
  if (!chosen) {
    for (const realm of realms) {
      const user = active(realm).filter((candidate) => candidate.role === Role.owner).sort((a, b) => a.userId - b.userId)[0];
      if (user) {
        chosen = { realm, user };
        break;
      }
    }
  }
  if (!chosen) return current !== null;
  const content = zuliprcText(chosen.user.email, chosen.user.apiKey, realmUrl(chosen.realm));
  if (content !== current) await writeFile(path, content, { mode: 0o600 });
  return true;
}

const zuliprcText = (email: string, key: string, site: string) => `[api]\nemail=${email}\nkey=${key}\nsite=${site}\n`;

export async function writeZuliprc(path: string, email: string, key: string, site: string): Promise<void> {
  await writeFile(path, zuliprcText(email, key, site), { mode: 0o600 });
}
