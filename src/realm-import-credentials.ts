import { join } from 'node:path';
import { newApiKey, randomString } from '../actors/ids.ts';
import { Role, type RealmRecord } from '../actors/realm/state.ts';
import { writeZuliprc } from './bootstrap.ts';
import { hashPassword } from './passwords.ts';
import type { RealmExport } from './realm-export-file.ts';

/** Whether an export holds its users' credentials: one made through the API holds none (realm-export-filter.ts). */
export function holdsCredentials(header: RealmExport): boolean {
  if (header.credentials === false) return false;
  // API exports made before the header said so: none of their people has a password.
  return header.realm.users.some((user) => !user.isBot && user.passwordHash !== null);
}

/** An owner's new credentials, for the operator to hand over. */
export interface OwnerLogin {
  userId: number;
  email: string;
  apiKey: string;
  password: string;
}

/** Long enough that a password nobody chose needs no strength check. */
const PASSWORD_LENGTH = 20;

/**
 * Gives the organization's active owners new credentials in its records, before they are adopted: an API key
 * and a password each. An export without credentials leaves its users with keys nobody knows and no
 * password; the original's import leaves them to reset their passwords by mail, which this server cannot
 * send, so the operator hands the owners these, and the owners let the others in (new accounts, invitations).
 */
export async function newOwnerLogins(realm: RealmRecord): Promise<OwnerLogin[]> {
  const logins: OwnerLogin[] = [];
  for (const user of realm.users) {
    if (!user.isActive || user.isBot || user.role !== Role.owner) continue;
    const password = randomString(PASSWORD_LENGTH);
    user.apiKey = newApiKey();
    user.passwordHash = await hashPassword(password);
    logins.push({ userId: user.userId, email: user.email, apiKey: user.apiKey, password });
  }
  return logins;
}

/** Writes each owner's client configuration beside the data (as the first start does its owner's); answers the paths. */
export async function writeOwnerZuliprcs(dataDir: string, subdomain: string, site: string, logins: readonly OwnerLogin[]): Promise<string[]> {
  const paths: string[] = [];
  for (const login of logins) {
    const path = join(dataDir, `zuliprc-${subdomain || 'root'}-${login.userId}`);
    await writeZuliprc(path, login.email, login.apiKey, site);
    paths.push(path);
  }
  return paths;
}
