import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomString } from '../actors/ids.ts';
import { Role } from '../actors/realm/state.ts';
import { hashPassword } from './passwords.ts';
import type { AppServices } from './services.ts';

export const DEFAULT_REALM_NAME = 'Chat';

/**
 * First start on an empty data directory: create the default organization (on the bare host) with an
 * owner account, and write a client configuration in the zuliprc format for it. Returns that file's path.
 */
export async function bootstrap(services: AppServices, announce: (line: string) => void): Promise<string> {
  const { runtime, config, log } = services;
  const zuliprc = join(config.dataDir, 'zuliprc');
  if (runtime.realms.size > 0) {
    if (existsSync(zuliprc)) announce(`Client configuration (zuliprc): ${zuliprc}`);
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
  });
  if (change?.type !== 'user.created') throw new Error('could not create the owner account');
  await writeZuliprc(zuliprc, change.user.email, change.user.apiKey, services.realmUrl(realm));
  log.info({ realm: realm.name, owner: change.user.email }, 'created the default organization');
  announce(`Created organization "${realm.name}" with owner ${change.user.email}.`);
  if (!config.ownerPassword) announce(`Owner password (shown once): ${password}`);
  announce(`Client configuration (zuliprc): ${zuliprc}`);
  return zuliprc;
}

export async function writeZuliprc(path: string, email: string, key: string, site: string): Promise<void> {
  await writeFile(path, `[api]\nemail=${email}\nkey=${key}\nsite=${site}\n`, { mode: 0o600 });
}
