import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { DEFAULT_REALM_LIMITS } from '../actors/realm/limits.ts';
import { realmRecordExcess } from '../actors/realm/record-limits.ts';
import type { ProfileField } from '../actors/realm/profile-fields/state.ts';
import { MAX_PROFILE_FIELDS } from '../actors/realm/profile-fields/decide.ts';
import { Role } from '../actors/realm/state.ts';
import type { Runtime } from '../actors/runtime.ts';
import { cli, cliWith } from './helpers/cli.ts';
import { openRuntime } from './helpers/runtime.ts';
import { tempDir } from './helpers/server.ts';

// Each command runs as a process of its own (tsx, about a second of CPU each).
t.setTimeout(300_000);

const operator = { kind: 'operator' } as const;

/** Runs `work` on a data directory's actors, then snapshots and closes it, as an operator command would. */
async function withActors<T>(dir: string, work: (runtime: Runtime) => Promise<T>): Promise<T> {
  const { store, runtime } = openRuntime(dir, { now: Date.now });
  try {
    const result = await work(runtime);
    await runtime.snapshot();
    return result;
  } finally {
    await store.close();
  }
}

/**
 * On the bare host of `dir`: an organization of 4 accounts and 3 email invitations, one of them revoked
 * (kept, but not usable). Returns how many user groups it has (the system groups).
 */
function organization(dir: string): Promise<number> {
  return withActors(dir, async (runtime) => {
    const { realmId } = await runtime.createRealm('', 'Acme');
    for (const name of ['ann', 'bob', 'cat', 'dan']) {
      await runtime.execute(realmId, { type: 'user.create', caller: operator, email: `${name}@example.com`, fullName: name, passwordHash: null, role: Role.member });
    }
    await runtime.execute(realmId, {
      type: 'invite.send', caller: operator, emails: ['eve@example.com', 'fay@example.com', 'gus@example.com'], invitedAs: Role.member,
      channelIds: [], groupIds: [], includeRealmDefaultSubscriptions: true, expiresInMinutes: null, notifyReferrerOnJoin: false, dailyLimit: null,
    });
    await runtime.execute(realmId, { type: 'invite.revoke', caller: operator, id: 3, multiuse: false });
    return runtime.realmState(realmId).groups.size;
  });
}

/** Every file under a directory with its size and modification time: what any write would change. */
function contents(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => {
      const path = join(entry.parentPath, entry.name);
      const { size, mtimeMs } = statSync(path);
      return `${path} ${size} ${mtimeMs}`;
    })
    .sort();
}

t.test('import-realm refuses, writing nothing, an organization past the configured bounds, naming each one exceeded', async (t) => {
  const source = tempDir();
  const target = tempDir();
  const exportFile = join(tempDir(), 'acme.realm');
  t.teardown(() => {
    for (const dir of [source, target, join(exportFile, '..')]) rmSync(dir, { recursive: true, force: true });
  });
  const groups = await organization(source);
  const exported = await cli('export-realm', '--data-dir', source, '--out', exportFile);
  t.equal(exported.code, 0, exported.stderr);
  await withActors(target, (runtime) => runtime.createRealm('', 'Target'));
  const before = contents(target);

  const bounds = (users: number, userGroups: number, invitations: number) => ({
    CHAT_MAX_USERS_PER_REALM: String(users),
    CHAT_MAX_USER_GROUPS_PER_REALM: String(userGroups),
    CHAT_MAX_INVITATIONS_PER_REALM: String(invitations),
  });
  const refused = await cliWith(bounds(3, groups - 1, 1), 'import-realm', exportFile, '--data-dir', target, '--subdomain', 'acme');
  t.equal(refused.code, 2, 'refused');
  t.match(refused.stderr, /larger than this server lets an organization be; nothing was imported/);
  t.match(refused.stderr, 'it has 4 accounts (bots and deactivated ones included) and may have at most 3 (raise CHAT_MAX_USERS_PER_REALM)');
  t.match(refused.stderr, `it has ${groups} user groups (system groups and deactivated ones included) and may have at most ${groups - 1} (raise CHAT_MAX_USER_GROUPS_PER_REALM)`);
  t.match(refused.stderr, 'it has 2 usable email invitations and may have at most 1 (raise CHAT_MAX_INVITATIONS_PER_REALM)', 'the revoked one is not counted');
  t.notMatch(refused.stderr, /channels|links/, 'the kinds within their bounds are not named');
  t.same(contents(target), before, 'nothing in the data directory was written');
  const verified = await cli('verify', '--data-dir', target);
  t.equal(verified.code, 0, verified.stdout + verified.stderr);
  t.match(verified.stdout, /1 organizations, 0 users/, 'no new organization');

  // At the bounds exactly (three invitations kept, two usable), as the running server would hold it.
  const imported = await cliWith(bounds(4, groups, 2), 'import-realm', exportFile, '--data-dir', target, '--subdomain', 'acme');
  t.equal(imported.code, 0, imported.stderr);
  t.match(imported.stdout, /as subdomain 'acme' \(id 2\): 4 users/);
  t.match((await cli('verify', '--data-dir', target)).stdout, /2 organizations, 4 users/);
});

t.test("custom profile fields have a bound of the server's own; reusable links are counted apart from email invitations", async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const record = await withActors(dir, async (runtime) => {
    const { realmId } = await runtime.createRealm('', 'Acme');
    for (let i = 0; i < 3; i++) {
      await runtime.execute(realmId, {
        type: 'invite.create_link', caller: operator, invitedAs: Role.member, channelIds: [], groupIds: [], includeRealmDefaultSubscriptions: true, expiresInMinutes: null,
      });
    }
    return runtime.realmRecords(realmId).realm;
  });
  const fields = Array.from({ length: MAX_PROFILE_FIELDS + 1 }, (_, i) => ({ id: i + 1 }) as ProfileField);
  const excess = realmRecordExcess({ ...record, profileFields: { fields, nextId: fields.length + 1, values: [] } }, { ...DEFAULT_REALM_LIMITS, invitations: 2 }, Date.now());
  t.same(excess, [
    { what: 'custom profile fields', count: MAX_PROFILE_FIELDS + 1, limit: MAX_PROFILE_FIELDS, bound: null },
    { what: 'usable invitation links', count: 3, limit: 2, bound: 'invitations' },
  ]);
  t.same(realmRecordExcess(record, DEFAULT_REALM_LIMITS, Date.now()), [], 'within the default bounds');
});
