import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { DEFAULT_REALM_LIMITS } from '../actors/realm/limits.ts';
import { realmRecordExcess, type Excess, type RealmRecords, type RecordBounds } from '../actors/realm/record-limits.ts';
import type { ProfileField } from '../actors/realm/profile-fields/state.ts';
import { MAX_PROFILE_FIELDS } from '../actors/realm/profile-fields/decide.ts';
import { MAX_PLAYGROUNDS } from '../actors/realm/playgrounds/decide.ts';
import type { Playground } from '../actors/realm/playgrounds/state.ts';
import { MAX_EMOJI_PER_MESSAGE } from '../actors/realm/messages/decide-misc.ts';
import type { Reaction } from '../actors/realm/messages/state.ts';
import { Role } from '../actors/realm/state.ts';
import type { Runtime } from '../actors/runtime.ts';
import { MAX_PUSH_DEVICES } from '../actors/user/push-e2ee.ts';
import { emptyUserState, userToRecord, type PushDevice } from '../actors/user/state.ts';
import { defaultConfig, recordBounds } from '../src/config.ts';
import { cli, cliWith } from './helpers/cli.ts';
import { channel, sendDirect, sendToChannel } from './helpers/messages.ts';
import { openRuntime } from './helpers/runtime.ts';
import { startTestServer, tempDir, type ApiClient } from './helpers/server.ts';

// Each command runs as a process of its own (tsx, about a second of CPU each).
t.setTimeout(300_000);

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

const operator = { kind: 'operator' } as const;

const DEFAULT_BOUNDS: RecordBounds = recordBounds(defaultConfig());

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
 * On the bare host of `dir`: an organization of 4 accounts, 3 email invitations, one of them revoked (kept,
 * but not usable), and 2 linkifiers; bob (user 2) keeps 3 saved snippets, cat 2. Returns how many user groups
 * it has (the system groups).
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
    for (const [userId, snippets] of [[2, 3], [3, 2]] as const) {
      for (let i = 0; i < snippets; i++) await runtime.executeUser(realmId, userId, { type: 'snippet.create', title: `snippet ${i}`, content: 'Hello' });
    }
    for (const prefix of ['ACME', 'BUG']) {
      await runtime.execute(realmId, { type: 'linkifier.add', caller: operator, pattern: `${prefix}-(?P<id>[0-9]+)`, urlTemplate: `https://example.com/${prefix}/{id}`, maxLinkifiers: 10 });
    }
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

  const bounds = (users: number, userGroups: number, invitations: number, linkifiers: number, snippets: number) => ({
    CHAT_MAX_USERS_PER_REALM: String(users),
    CHAT_MAX_USER_GROUPS_PER_REALM: String(userGroups),
    CHAT_MAX_INVITATIONS_PER_REALM: String(invitations),
    CHAT_MAX_LINKIFIERS_PER_REALM: String(linkifiers),
    CHAT_MAX_SAVED_SNIPPETS_PER_USER: String(snippets),
  });
  const refused = await cliWith(bounds(3, groups - 1, 1, 1, 2), 'import-realm', exportFile, '--data-dir', target, '--subdomain', 'acme');
  t.equal(refused.code, 2, 'refused');
  t.match(refused.stderr, /larger than this server lets an organization be; nothing was imported/);
  t.match(refused.stderr, 'it has 4 accounts (bots and deactivated ones included) and may have at most 3 (raise CHAT_MAX_USERS_PER_REALM)');
  t.match(refused.stderr, `it has ${groups} user groups (system groups and deactivated ones included) and may have at most ${groups - 1} (raise CHAT_MAX_USER_GROUPS_PER_REALM)`);
  t.match(refused.stderr, 'it has 2 usable email invitations and may have at most 1 (raise CHAT_MAX_INVITATIONS_PER_REALM)', 'the revoked one is not counted');
  t.match(refused.stderr, 'it has 2 linkifiers and may have at most 1 (raise CHAT_MAX_LINKIFIERS_PER_REALM)');
  t.match(refused.stderr, 'user 2 has 3 saved snippets and may have at most 2 (raise CHAT_MAX_SAVED_SNIPPETS_PER_USER)', 'the user with the most');
  t.notMatch(refused.stderr, /user 3/, 'one line for the kind, not one per user past it');
  t.notMatch(refused.stderr, /channels|links/, 'the kinds within their bounds are not named');
  t.same(contents(target), before, 'nothing in the data directory was written');
  const verified = await cli('verify', '--data-dir', target);
  t.equal(verified.code, 0, verified.stdout + verified.stderr);
  t.match(verified.stdout, /1 organizations, 0 users/, 'no new organization');

  // At the bounds exactly (three invitations kept, two usable), as the running server would hold it.
  const imported = await cliWith(bounds(4, groups, 2, 2, 3), 'import-realm', exportFile, '--data-dir', target, '--subdomain', 'acme');
  t.equal(imported.code, 0, imported.stderr);
  t.match(imported.stdout, /as subdomain 'acme' \(id 2\): 4 users/);
  t.match((await cli('verify', '--data-dir', target)).stdout, /2 organizations, 4 users/);
});

t.test("custom profile fields, playgrounds, push devices and a message's reactions have bounds of the server's own; reusable links are counted apart from email invitations", async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const records = await withActors(dir, async (runtime) => {
    const { realmId } = await runtime.createRealm('', 'Acme');
    for (let i = 0; i < 3; i++) {
      await runtime.execute(realmId, {
        type: 'invite.create_link', caller: operator, invitedAs: Role.member, channelIds: [], groupIds: [], includeRealmDefaultSubscriptions: true, expiresInMinutes: null,
      });
    }
    return runtime.realmRecords(realmId);
  });
  t.same(realmRecordExcess(records, DEFAULT_BOUNDS, Date.now()), [], 'within the default bounds');

  const { realm } = records;
  const fields = Array.from({ length: MAX_PROFILE_FIELDS + 1 }, (_, i) => ({ id: i + 1 }) as ProfileField);
  const playgrounds = Array.from({ length: MAX_PLAYGROUNDS + 1 }, (_, i) => ({ id: i + 1 }) as Playground);
  const devices = Array.from({ length: MAX_PUSH_DEVICES + 1 }, (_, i) => ({ pushAccountId: i }) as PushDevice);
  // Reactions count by emoji: a second user's reaction with the same emoji adds none.
  const reaction = (emojiCode: string, userId: number) => ({ emojiCode, reactionType: 'unicode_emoji', userId }) as Reaction;
  const reactions = [...Array.from({ length: MAX_EMOJI_PER_MESSAGE + 1 }, (_, i) => reaction(`1f${600 + i}`, 1)), reaction('1f600', 2)];
  const messages = { ...realm.messages!, messages: [{ id: 7, reactions }] } as NonNullable<typeof realm.messages>;
  const past: RealmRecords = {
    realm: { ...realm, profileFields: { fields, nextId: fields.length + 1, values: [] }, playgrounds: { list: playgrounds, nextId: playgrounds.length + 1 }, messages },
    users: [{ value: 'active', state: { ...userToRecord(emptyUserState(realm.realmId, 5)), pushDevices: devices } }],
  };
  t.same(realmRecordExcess(past, { ...DEFAULT_BOUNDS, invitations: 2 }, Date.now()), [
    { what: 'custom profile fields', count: MAX_PROFILE_FIELDS + 1, limit: MAX_PROFILE_FIELDS, bound: null },
    { what: 'usable invitation links', count: 3, limit: 2, bound: 'invitations' },
    { what: 'code playgrounds', count: MAX_PLAYGROUNDS + 1, limit: MAX_PLAYGROUNDS, bound: null },
    { what: 'different emoji reactions', count: MAX_EMOJI_PER_MESSAGE + 1, limit: MAX_EMOJI_PER_MESSAGE, bound: null, holder: 'message 7' },
    { what: 'end-to-end encrypted push devices', count: MAX_PUSH_DEVICES + 1, limit: MAX_PUSH_DEVICES, bound: null, holder: 'user 5' },
  ]);
});

/** A request that must succeed; its answer's body. */
async function ok(t: Test, answer: Promise<{ status: number; body: Record<string, unknown> }>, what: string): Promise<Record<string, unknown>> {
  const { status, body } = await answer;
  t.equal(status, 200, `${what}: ${status === 200 ? 'ok' : JSON.stringify(body)}`);
  return body;
}

type Kinds = Partial<Record<keyof RecordBounds, Omit<Excess, 'limit' | 'bound'>>>;

/**
 * Through the API, as the server makes them, two of each kind a bound configured apart from RealmLimits
 * counts (for a kind bounded per user or per message, for the one holding the most), beside some that the
 * commands do not count; what each bound counts in the organization's records.
 */
async function twoOfEach(t: Test, owner: ApiClient): Promise<Kinds> {
  const ann = await owner.createUser('ann@example.com', 'Ann');
  const bob = await owner.createUser('bob@example.com', 'Bob');
  const asAnn = owner.as(ann);
  const general = await channel(owner, 'general', [1, ann.userId, bob.userId]);

  for (const prefix of ['ACME', 'BUG']) await ok(t, owner.post('/realm/filters', { pattern: `${prefix}-(?P<id>[0-9]+)`, url_template: `https://example.com/${prefix}/{id}` }), 'linkifier');
  const folders = [];
  for (const name of ['Teams', 'Projects']) folders.push((await ok(t, owner.post('/channel_folders/create', { name }), 'channel folder')).channel_folder_id);
  await ok(t, owner.patch(`/channel_folders/${folders[0]}`, { is_archived: true }), 'an archived folder still counts');
  for (const domain of ['example.com', 'example.org']) await ok(t, owner.post('/realm/domains', { domain, allow_subdomains: false }), 'domain');
  for (const group_name of ['Starters', 'Extras']) await ok(t, owner.post('/default_stream_groups/create', { group_name, description: '', stream_names: ['general'] }), 'default channel group');

  // Bots: ann owns 2 active ones (a deactivated third does not count), bob 1.
  const bots = [];
  for (const short_name of ['one', 'two', 'three']) bots.push((await ok(t, asAnn.post('/bots', { full_name: `Bot ${short_name}`, short_name }), 'bot')).user_id);
  await ok(t, asAnn.delete(`/bots/${bots[2]}`), 'a deactivated bot');
  await ok(t, owner.as(bob).post('/bots', { full_name: 'Bob bot', short_name: 'bob' }), "bob's bot");

  // ann's personal state, two of each kind; bob keeps one saved snippet.
  const later = Math.floor(Date.now() / 1000) + 3600;
  for (const i of [1, 2]) {
    const message = await sendToChannel(asAnn, general, 'remind me', `about this ${i}`);
    await ok(t, asAnn.post('/reminders', { message_id: message, scheduled_delivery_timestamp: later }), 'reminder');
    await ok(t, asAnn.post('/scheduled_messages', { type: 'stream', to: general, topic: 'later', content: `later ${i}`, scheduled_delivery_timestamp: later + i }), 'scheduled message');
    await ok(t, asAnn.post('/saved_snippets', { title: `snippet ${i}`, content: 'Hello' }), 'saved snippet');
    await ok(t, asAnn.post('/user_topics', { stream_id: general, topic: `topic ${i}`, visibility_policy: 1 }), 'topic policy');
    await ok(t, asAnn.post('/users/me/push_device_token', { token: `token-${i}` }), 'push token');
    await ok(t, asAnn.post('/navigation_views', { fragment: `narrow/view/${i}`, name: `View ${i}`, is_pinned: true }), 'navigation view');
  }
  await ok(t, asAnn.post('/drafts', { drafts: [1, 2].map((i) => ({ type: 'stream', to: [general], topic: 'draft', content: `draft ${i}` })) }), 'drafts');
  await ok(t, asAnn.post('/users/me/alert_words', { alert_words: ['deploy', 'outage'] }), 'alert words');
  await ok(t, owner.as(bob).post('/saved_snippets', { title: 'one', content: 'Hello' }), "bob's saved snippet");

  const message = await sendDirect(owner, [ann.userId], 'hello');
  for (const content of ['{"any": 1}', '{"any": 2}']) await ok(t, owner.post('/submessage', { message_id: message, msg_type: 'widget', content }), 'submessage');

  const user = `user ${ann.userId}`;
  return {
    linkifiers: { what: 'linkifiers', count: 2 },
    channelFolders: { what: 'channel folders (archived ones included)', count: 2 },
    realmDomains: { what: 'allowed sign-up domains', count: 2 },
    defaultChannelGroups: { what: 'default channel groups', count: 2 },
    botsPerUser: { what: 'active bots', count: 2, holder: user },
    savedSnippets: { what: 'saved snippets', count: 2, holder: user },
    drafts: { what: 'drafts', count: 2, holder: user },
    scheduledMessages: { what: 'scheduled messages (failed ones included, reminders apart)', count: 2, holder: user },
    remindersPerUser: { what: 'reminders', count: 2, holder: user },
    alertWords: { what: 'alert words', count: 2, holder: user },
    topicPolicies: { what: 'topics with a visibility policy', count: 2, holder: user },
    pushTokens: { what: 'push device tokens', count: 2, holder: user },
    navigationViewsPerUser: { what: 'navigation views', count: 2, holder: user },
    submessagesPerMessage: { what: 'submessages', count: 2, holder: `message ${message}` },
  };
}

t.test('each bound configured apart from RealmLimits is checked as the command that makes its kind counts: past it refused, at it accepted', async (t) => {
  const { api: owner, server } = await startTestServer(t, { rateLimit: null });
  const kinds = await twoOfEach(t, owner);
  const records = server.runtime.realmRecords(1);
  const checked = Object.keys(DEFAULT_BOUNDS).filter((bound) => !(bound in DEFAULT_REALM_LIMITS));
  t.same(Object.keys(kinds).sort(), checked.sort(), 'every such bound is made here');

  const atBounds: RecordBounds = { ...DEFAULT_BOUNDS };
  for (const [bound, { count }] of Object.entries(kinds)) atBounds[bound as keyof RecordBounds] = count;
  t.same(realmRecordExcess(records, atBounds, Date.now()), [], 'at every bound');
  for (const [bound, kind] of Object.entries(kinds) as [keyof RecordBounds, Omit<Excess, 'limit' | 'bound'>][]) {
    const excess = realmRecordExcess(records, { ...atBounds, [bound]: kind.count - 1 }, Date.now());
    t.same(excess, [{ ...kind, limit: kind.count - 1, bound }], `past ${bound}`);
  }
});
