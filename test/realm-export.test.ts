import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startChild } from './helpers/child.ts';
import { cli } from './helpers/cli.ts';
import { HostClient } from './helpers/host-client.ts';
import { tempDir } from './helpers/server.ts';

// Each case starts servers or commands as processes of their own (tsx, about a second of CPU each): with
// the CPU shared (the suite's other file, or a loaded machine) the file takes minutes, beyond the suite's 120 s.
t.setTimeout(600_000);

const EXTERNAL = 'chat.test';

/** What a user of the organization sees, for comparing the original with the imported copy. */
async function view(client: HostClient) {
  const users = (await client.ok('GET', '/users')).body.members.map((u: Record<string, unknown>) => [u.user_id, u.email, u.full_name, u.role, u.is_active]);
  const subscriptions = (await client.ok('GET', '/users/me/subscriptions')).body.subscriptions.map((s: Record<string, unknown>) => [s.stream_id, s.name, s.invite_only, s.color, s.pin_to_top]);
  const streams = (await client.ok('GET', '/streams')).body.streams.map((s: Record<string, unknown>) => [s.stream_id, s.name]);
  const messages = (await client.ok('GET', '/messages', { anchor: 'newest', num_before: 1000, num_after: 0, apply_markdown: false })).body.messages
    .map((m: Record<string, unknown>) => [m.id, m.sender_id, m.content, m.subject, m.flags, (m.reactions as { emoji_name: string }[]).map((r) => r.emoji_name)]);
  const drafts = (await client.ok('GET', '/drafts')).body.drafts.map((d: Record<string, unknown>) => [d.id, d.content]);
  const snippets = (await client.ok('GET', '/saved_snippets')).body.saved_snippets.map((s: Record<string, unknown>) => [s.title, s.content]);
  const registered = (await client.ok('POST', '/register', { fetch_event_types: ['user_settings', 'user_topic', 'alert_words'] })).body;
  return { users, subscriptions, streams, messages, drafts, snippets, settings: registered.user_settings, topics: registered.user_topics, alertWords: registered.alert_words };
}

t.test('export-realm and import-realm: an organization moves to another data directory under a new subdomain', async (t) => {
  const source = tempDir();
  const target = tempDir();
  const exportFile = join(tempDir(), 'acme.realm');
  t.teardown(() => {
    for (const dir of [source, target, join(exportFile, '..')]) rmSync(dir, { recursive: true, force: true });
  });

  for (const command of ['export-realm', 'import-realm']) {
    const help = await cli(command, '--help');
    t.equal(help.code, 0, `${command} --help`);
    t.match(help.stdout, /Usage:/);
  }

  // An organization with some of everything, on the bare host of the source.
  const env = { CHAT_EXTERNAL_URL: `http://${EXTERNAL}` };
  let server = await startChild(source, env);
  const owner = new HostClient(server.url, EXTERNAL, server.owner);
  const alice = await owner.createUser('alice@example.com', 'Alice');
  const bob = await owner.createUser('bob@example.com', 'Bob');
  await alice.client.ok('POST', '/users/me/subscriptions', { subscriptions: [{ name: 'general' }, { name: 'plans' }], principals: [alice.userId, bob.userId] });
  await alice.client.ok('POST', '/users/me/subscriptions', { subscriptions: [{ name: 'secret' }], principals: [alice.userId, bob.userId], invite_only: true });
  const general = (await alice.client.ok('GET', '/get_stream_id', { stream: 'general' })).body.stream_id;
  const first = (await alice.client.ok('POST', '/messages', { type: 'stream', to: 'general', topic: 'hello', content: 'Hello **world**' })).body.id;
  await bob.client.ok('POST', '/messages', { type: 'stream', to: 'secret', topic: 'plans', content: 'secret plans' });
  await bob.client.ok('POST', '/messages', { type: 'direct', to: [alice.userId], content: 'a direct word' });
  await alice.client.ok('POST', `/messages/${first}/reactions`, { emoji_name: 'smile' });
  await alice.client.ok('POST', '/messages/flags', { messages: [first], op: 'add', flag: 'starred' });
  await alice.client.ok('POST', '/drafts', { drafts: [{ type: 'stream', to: [general], topic: 'later', content: 'a draft' }] });
  await alice.client.ok('POST', '/saved_snippets', { title: 'greeting', content: 'Hi there' });
  await alice.client.ok('PATCH', '/settings', { web_font_size_px: 19, twenty_four_hour_time: true });
  await alice.client.ok('POST', '/users/me/subscriptions/properties', { subscription_data: [{ stream_id: general, property: 'color', value: '#123456' }] });
  await alice.client.ok('POST', '/user_topics', { stream_id: general, topic: 'hello', visibility_policy: 3 });
  await alice.client.ok('POST', '/users/me/alert_words', { alert_words: ['plans'] });
  const before = await view(alice.client);
  const ownerBefore = await view(owner);
  server.process.kill('SIGTERM');
  t.equal(await server.exited, 0);

  const exported = await cli('export-realm', '--data-dir', source, '--out', exportFile);
  t.equal(exported.code, 0, exported.stderr);
  t.match(exported.stdout, /Exported organization .* 3 users, 3 channels, 3 messages/);
  t.ok(existsSync(exportFile), 'the file is written');
  t.equal((await cli('export-realm', '--data-dir', source, '--out', exportFile)).code, 2, 'an existing file is not overwritten');
  t.match((await cli('export-realm', '--data-dir', source, '--out', join(target, 'x'), '--subdomain', 'nosuch')).stderr, /no organization with subdomain 'nosuch'/);

  // The target already has an organization on its bare host.
  const created = await cli('create-realm', '--data-dir', target, '--subdomain', '', '--name', 'Target Org', '--owner-email', 'boss@target.test', '--owner-password', 'boss-Long-passw0rd');
  t.equal(created.code, 0, created.stderr);
  const refused = await cli('import-realm', exportFile, '--data-dir', target, '--subdomain', '');
  t.equal(refused.code, 2, 'importing over an existing subdomain is refused');
  t.match(refused.stderr, /subdomain '' exists already/);
  t.match((await cli('import-realm', exportFile, '--data-dir', target, '--subdomain', 'Bad_Name!')).stderr, /invalid subdomain/);
  t.match((await cli('import-realm', exportFile, '--data-dir', target)).stderr, /--subdomain is required/);
  const notExport = join(target, 'not-an-export');
  writeFileSync(notExport, 'hello');
  t.match((await cli('import-realm', notExport, '--data-dir', target, '--subdomain', 'x')).stderr, /not a realm export/);

  const imported = await cli('import-realm', exportFile, '--data-dir', target, '--subdomain', 'acme');
  t.equal(imported.code, 0, imported.stderr);
  t.match(imported.stdout, /as subdomain 'acme' \(id 2\): 3 users, 3 channels, 3 messages/);
  const again = await cli('import-realm', exportFile, '--data-dir', target, '--subdomain', 'acme');
  t.equal(again.code, 2, 'a second import to the same subdomain is refused');
  const verified = await cli('verify', '--data-dir', target);
  t.equal(verified.code, 0, verified.stdout + verified.stderr);
  t.match(verified.stdout, /2 organizations, 4 users/);

  // The copy serves on its subdomain, to the same passwords and API keys, and shows the same things.
  server = await startChild(target, env);
  t.teardown(async () => {
    if (server.process.exitCode === null && server.process.signalCode === null) {
      server.process.kill('SIGKILL');
      await server.exited;
    }
  });
  const acme = new HostClient(server.url, `acme.${EXTERNAL}`, null);
  const aliceThere = await acme.login('alice@example.com');
  t.equal(aliceThere.credentials!.key, alice.client.credentials!.key, 'the API key came along');
  t.same(await view(aliceThere), before, "alice's view is the same: users, channels, messages with flags and reactions, drafts, snippets, settings, topics, alert words");
  t.same(await view(acme.as(owner.credentials)), ownerBefore, "the owner's view too, with the owner's old key");
  const sent = await aliceThere.ok('POST', '/messages', { type: 'stream', to: 'general', topic: 'hello', content: 'after the move' });
  t.ok(sent.body.id > first, 'new messages continue the ids');

  // The target's own organization is untouched and separate.
  const boss = await new HostClient(server.url, EXTERNAL, null).login('boss@target.test', 'boss-Long-passw0rd');
  const targetUsers = (await boss.ok('GET', '/users')).body.members.map((u: { email: string }) => u.email);
  t.same(targetUsers, ['boss@target.test'], "the target's organization has only its own users");
  t.equal((await new HostClient(server.url, EXTERNAL, aliceThere.credentials).get('/users/me')).status, 401, "an imported key does not open the bare host's organization");
  server.process.kill('SIGTERM');
  t.equal(await server.exited, 0);
});
