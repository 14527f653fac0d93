import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startChild } from './helpers/child.ts';
import { cli, cliWith, cliWithInput } from './helpers/cli.ts';
import { tempDir } from './helpers/server.ts';

// Each case starts the command as its own process (tsx, about a second of CPU each): with the CPU shared
// (the suite's other file, or a loaded machine) the whole file takes minutes, beyond the suite's 120 s a file.
t.setTimeout(600_000);

t.test('every command has --help', async (t) => {
  for (const args of [['--help'], ['serve', '--help'], ['create-realm', '--help'], ['create-user', '--help']]) {
    const result = await cli(...args);
    t.equal(result.code, 0, `${args.join(' ')} exits 0`);
    t.match(result.stdout, /Usage:/, `${args.join(' ')} prints usage`);
  }
  t.match((await cli('restore', '--help')).stdout, /--until TIME\|POS .*\n.*--log DIR/, 'restore explains point-in-time recovery');
  const unknown = await cli('no-such-command');
  t.equal(unknown.code, 2, 'an unknown command is a usage error');
  t.match(unknown.stderr, /unknown command/);
});

t.test('operator commands create an organization and users that can log in', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const realm = await cli('create-realm', '--data-dir', dataDir, '--subdomain', '', '--name', 'Ops Org',
    '--owner-email', 'boss@ops.test', '--owner-password', 'boss-Long-passw0rd');
  t.equal(realm.code, 0, realm.stderr);
  const user = await cli('create-user', '--data-dir', dataDir, '--email', 'ann@ops.test', '--full-name', 'Ann',
    '--password', 'ann-Long-passw0rd', '--role', 'moderator');
  t.equal(user.code, 0, user.stderr);
  t.match(user.stdout, /Created user ann@ops\.test \(id 2, moderator\)/);

  const weak = await cli('create-user', '--data-dir', dataDir, '--email', 'weak@ops.test', '--full-name', 'W', '--password', 'abc');
  t.equal(weak.code, 2, 'a weak password is refused');
  const missing = await cli('create-user', '--data-dir', dataDir, '--full-name', 'X', '--password', 'x-Long-passw0rd');
  t.match(missing.stderr, /--email is required/);
  const duplicate = await cli('create-user', '--data-dir', dataDir, '--email', 'ann@ops.test', '--full-name', 'Ann', '--password', 'ann-Long-passw0rd');
  t.match(duplicate.stderr, /already in use/);

  const server = await startChild(dataDir);
  t.teardown(async () => {
    server.process.kill('SIGTERM');
    await server.exited;
  });
  const login = await server.api.as(null).post('/fetch_api_key', { username: 'ann@ops.test', password: 'ann-Long-passw0rd' });
  t.equal(login.status, 200, 'the user made by the CLI logs in');
  const me = await server.api.as({ email: 'ann@ops.test', key: login.body.api_key }).get('/users/me');
  t.equal(me.body.role, 300);
  const settings = await server.api.as(null).get('/server_settings');
  t.equal(settings.body.realm_name, 'Ops Org');

  const busy = await cli('create-user', '--data-dir', dataDir, '--email', 'late@ops.test', '--full-name', 'Late', '--password', 'late-Long-passw0rd');
  t.not(busy.code, 0, 'refused while the server owns the directory');
  t.match(busy.stderr, /in use by process/);
});

t.test('operator commands read passwords from a file, standard input or CHAT_PASSWORD; one on the command line is warned about', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const file = join(dataDir, '..', `${dataDir.split('/').pop()}-password`);
  writeFileSync(file, 'boss-Long-passw0rd\nignored second line\n', { mode: 0o600 });
  t.teardown(() => rmSync(file, { force: true }));

  const realm = await cli('create-realm', '--data-dir', dataDir, '--subdomain', '', '--name', 'Ops Org', '--owner-email', 'boss@ops.test', '--owner-password-file', file);
  t.equal(realm.code, 0, realm.stderr);
  t.notMatch(realm.stderr, /warning/, 'no warning for a password file');
  const fromInput = await cliWithInput('ann-Long-passw0rd\n', {}, 'create-user', '--data-dir', dataDir, '--email', 'ann@ops.test', '--full-name', 'Ann', '--password-file', '-');
  t.equal(fromInput.code, 0, fromInput.stderr);
  const fromEnv = await cliWith({ CHAT_PASSWORD: 'bo-Long-passw0rd' }, 'create-user', '--data-dir', dataDir, '--email', 'bo@ops.test', '--full-name', 'Bo');
  t.equal(fromEnv.code, 0, fromEnv.stderr);
  t.notMatch(fromInput.stderr + fromEnv.stderr, /warning/, 'no warning for standard input or the environment');
  const inline = await cli('create-user', '--data-dir', dataDir, '--email', 'cy@ops.test', '--full-name', 'Cy', '--password', 'cy-Long-passw0rd');
  t.equal(inline.code, 0, inline.stderr);
  t.match(inline.stderr, /warning: a password given with --password can be read by other users/, 'the command line still works, with a warning');
  const none = await cliWithInput('', { CHAT_PASSWORD: '' }, 'create-user', '--data-dir', dataDir, '--email', 'dee@ops.test', '--full-name', 'Dee');
  t.equal(none.code, 2, 'no password anywhere is a usage error');
  t.match(none.stderr, /--password-file, CHAT_PASSWORD or --password is required/);

  const server = await startChild(dataDir);
  t.teardown(async () => {
    server.process.kill('SIGTERM');
    await server.exited;
  });
  for (const [username, password] of [['boss@ops.test', 'boss-Long-passw0rd'], ['ann@ops.test', 'ann-Long-passw0rd'], ['bo@ops.test', 'bo-Long-passw0rd'], ['cy@ops.test', 'cy-Long-passw0rd']]) {
    const login = await server.api.as(null).post('/fetch_api_key', { username, password });
    t.equal(login.status, 200, `${username} logs in with the password given`, { body: login.body });
  }
});

t.test("operator commands keep the configured bounds: create-user past CHAT_MAX_USERS_PER_REALM is refused", async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const bound = { CHAT_MAX_USERS_PER_REALM: '2' };
  const realm = await cliWith(bound, 'create-realm', '--data-dir', dataDir, '--subdomain', '', '--name', 'Small Org', '--owner-email', 'boss@small.test', '--owner-password', 'boss-Long-passw0rd');
  t.equal(realm.code, 0, realm.stderr);
  const second = await cliWith(bound, 'create-user', '--data-dir', dataDir, '--email', 'ann@small.test', '--full-name', 'Ann', '--password', 'ann-Long-passw0rd');
  t.equal(second.code, 0, second.stderr);
  const third = await cliWith(bound, 'create-user', '--data-dir', dataDir, '--email', 'bo@small.test', '--full-name', 'Bo', '--password', 'bo-Long-passw0rd');
  t.not(third.code, 0, 'the account past the bound is refused');
  t.match(third.stderr, /already has 2 accounts/);
  const raised = await cliWith({ CHAT_MAX_USERS_PER_REALM: '3' }, 'create-user', '--data-dir', dataDir, '--email', 'bo@small.test', '--full-name', 'Bo', '--password', 'bo-Long-passw0rd');
  t.equal(raised.code, 0, `made once the bound is raised: ${raised.stderr}`);
});

t.test('snapshot while serving, verify, and restore into a new directory', async (t) => {
  const dataDir = tempDir();
  const restoredDir = tempDir();
  const backup = join(tempDir(), 'backup');
  t.teardown(() => {
    for (const dir of [dataDir, restoredDir]) rmSync(dir, { recursive: true, force: true });
    rmSync(backup, { recursive: true, force: true });
  });
  const server = await startChild(dataDir);
  await server.api.post('/users', { email: 'snap@example.com', password: 'snap-Long-passw0rd', full_name: 'Snap' });
  await server.api.post('/channels/create', { name: 'kept', subscribers: [1] });

  const snapshot = await cli('snapshot', '--data-dir', dataDir, '--out', backup);
  t.equal(snapshot.code, 0, snapshot.stderr);
  t.match(snapshot.stdout, /Snapshot written/);
  t.not((await cli('snapshot', '--data-dir', dataDir, '--out', backup)).code, 0, 'an existing output is not overwritten');
  const verified = await cli('verify', '--data-dir', dataDir);
  t.equal(verified.code, 0, verified.stderr);
  t.match(verified.stdout, /1 organizations, 2 users, 1 channels/);
  t.match(verified.stdout, /^OK$/m);
  server.process.kill('SIGTERM');
  await server.exited;

  const restored = await cli('restore', backup, '--data-dir', restoredDir);
  t.equal(restored.code, 0, restored.stderr);
  t.match(restored.stdout, /2 users, 1 channels/);
  const again = await cli('restore', backup, '--data-dir', restoredDir);
  t.match(again.stderr, /already holds data; pass --force/);
  t.equal((await cli('restore', backup, '--data-dir', restoredDir, '--force')).code, 0);

  const revived = await startChild(restoredDir, { CHAT_OWNER_PASSWORD: 'unused-because-not-first-start' });
  t.teardown(async () => {
    revived.process.kill('SIGTERM');
    await revived.exited;
  });
  const login = await revived.api.as(null).post('/fetch_api_key', { username: 'snap@example.com', password: 'snap-Long-passw0rd' });
  t.equal(login.status, 200, 'a user from the snapshot logs in on the restored directory');
  const subs = await revived.api.as({ email: 'snap@example.com', key: login.body.api_key }).get('/streams');
  t.match(subs.body.streams, [{ name: 'kept' }]);
});
