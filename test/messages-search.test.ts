import { copyFileSync, existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { Runtime } from '../actors/runtime.ts';
import { writeOrganization } from '../bench/lib/organization.ts';
import { SqliteSearchIndex } from '../snapshots/search-index.ts';
import { StorageError, Store } from '../snapshots/store.ts';
import { childServers, outputMatching, startChild, type ChildServer } from './helpers/child.ts';
import { channel, fetchIds, sendDirect, sendToChannel } from './helpers/messages.ts';
import { startTestServer, tempDir, type ApiClient } from './helpers/server.ts';

const INDEX_FILES = ['search.sqlite', 'search.sqlite-wal', 'search.sqlite-shm'];

const search = (api: ApiClient, operand: string, narrow: unknown[] = []) => fetchIds(api, [...narrow, { operator: 'search', operand }]);

t.test('search: stemming, quoted phrases, the last word as a prefix, combined with other narrows', async (t) => {
  const { api } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  const general = await channel(api, 'general', [1, ann.userId]);
  const walking = await sendToChannel(api, general, 'outdoors', 'We went walking in the park');
  const walked = await sendToChannel(api.as(ann), general, 'outdoors', 'She walked the dog to the park');
  const thread = await sendToChannel(api, general, 'plans', 'a park walkthrough later');
  const reversed = await sendToChannel(api, general, 'plans', 'the dog park is open');
  const dm = await sendDirect(api, [ann.userId], 'walk in the park tomorrow');
  t.same(await search(api, 'walks park'), [walking, walked, dm], 'a word finds the other forms of its stem; a word before the last is not a prefix');
  t.same(await search(api, 'park walk'), [walking, walked, thread, dm], 'every word must be there; the last one also starts longer words');
  t.same(await search(api, '"dog park"'), [reversed], 'a quoted phrase, in its order');
  t.same(await search(api, '"the dog" walked'), [walked], 'a phrase and a word');
  t.same(await search(api, 'outdoors'), [walking, walked], 'the topic is searched too');
  t.same(await search(api, 'park', [['sender', ann.userId]]), [walked], 'with a sender');
  t.same(await search(api, 'park', [['is', 'dm']]), [dm], 'with is:dm');
  t.same(await search(api, 'park', [['channel', 'general'], ['topic', 'plans']]), [thread, reversed], 'with a channel and topic');
  t.same(await fetchIds(api, [['channel', 'general'], { operator: 'search', operand: 'walk', negated: true }]), [reversed], 'negated');
  t.same(await fetchIds(api, [{ operator: 'search', operand: 'park' }, { operator: 'search', operand: 'dog', negated: true }]), [walking, thread, dm], 'a search minus a negated one');
  t.same(await search(api, 'nothing-like-this'), []);
  const window = (await api.get('/messages', { anchor: walked, num_before: 1, num_after: 1, narrow: [{ operator: 'search', operand: 'park' }] })).body;
  t.same(window.messages.map((m: { id: number }) => m.id), [walking, walked, thread], 'a window around an anchor');
  t.match(window, { found_anchor: true, found_oldest: true, found_newest: false });
  const first = (await api.as(ann).get('/messages', { anchor: 'first_unread', num_before: 0, num_after: 0, narrow: [{ operator: 'search', operand: 'walking' }] })).body;
  t.same(first.messages.map((m: { id: number }) => m.id), [walking], 'first_unread over a search');
  const checked = (await api.get('/messages/matches_narrow', { msg_ids: [walking, thread, reversed], narrow: [{ operator: 'search', operand: 'walked' }] })).body.messages;
  t.same(Object.keys(checked), [String(walking), String(thread)], 'matches_narrow uses the same index');
  const flagged = (await api.as(ann).post('/messages/flags/narrow', { anchor: 'oldest', num_before: 0, num_after: 100, narrow: JSON.stringify([['search', 'walked']]), op: 'add', flag: 'starred' })).body;
  t.match(flagged, { processed_count: 4, updated_count: 4 });
});

t.test('the last word as a prefix: the index terms it starts, across index writes and deletions', async (t) => {
  const { api } = await startTestServer(t, { rateLimit: null });
  const general = await channel(api, 'general', [1]);
  // One at a time: each is its own index write, so the terms lie in several FTS5 segments.
  const send = async (content: string) => sendToChannel(api, general, 'words', content);
  const walk = await send('a walk outside');
  const walker = await send('the walkers met');
  const conversation = await send('a long conversation');
  const converge = await send('the lines converge');
  const gone = await send('walkabout soon deleted');
  const hyphen = await send('a foo-bar thing');
  const filler: number[] = [];
  for (let i = 0; i < 40; i++) filler.push(await send(`filler ${i} walkway`));
  await api.delete(`/messages/${gone}`);
  t.same(await search(api, 'walk'), [walk, walker, ...filler], 'every term the word starts, the deleted message not among them');
  t.same(await search(api, 'walke'), [walk, walker, ...filler], 'the typed prefix is stemmed as the index stems words ("walke" as "walk")');
  t.same(await search(api, 'met walk'), [walker], 'a prefix after another word');
  t.same(await search(api, 'conv'), [conversation, converge], 'a term that does not read back as itself (conversation is stored as "convers") is still found');
  t.same(await search(api, 'convers'), [conversation, converge], '"convers" is stemmed to "conver" before it is a prefix');
  t.same(await search(api, 'foo-ba'), [hyphen], 'a last word of two tokens: a phrase whose last token is a prefix');
  t.same(await search(api, 'zebr'), [], 'a prefix no term starts');
  t.same(await fetchIds(api, [['channel', 'general'], { operator: 'search', operand: 'walk', negated: true }]), [conversation, converge, hyphen], 'a negated prefix');
  const checked = (await api.get('/messages/matches_narrow', { msg_ids: [walk, conversation, filler[0]], narrow: [{ operator: 'search', operand: 'walk' }] })).body.messages;
  t.same(Object.keys(checked), [String(walk), String(filler[0])], 'matches_narrow expands the prefix too');
});

t.test('a prefix that starts more index terms than CHAT_SEARCH_PREFIX_TERMS is matched as a word', async (t) => {
  const { api } = await startTestServer(t, { rateLimit: null, searchPrefixTerms: 3 });
  const general = await channel(api, 'general', [1]);
  const walking = await sendToChannel(api, general, 'words', 'out walking');
  const others = [];
  for (const word of ['walkers', 'walkway', 'walkthrough']) others.push(await sendToChannel(api, general, 'words', `a ${word}`));
  t.same(await search(api, 'walk'), [walking], 'four terms start "walk": the word and its stem only');
  t.same(await search(api, 'walkw'), [others[1]], 'one term starts "walkw": a prefix');
  t.same(await search(api, 'walkers'), [others[0]]);
});

t.test('edits, moves and deletions are searched as they are now', async (t) => {
  const { api } = await startTestServer(t);
  const general = await channel(api, 'general', [1]);
  const edited = await sendToChannel(api, general, 'one', 'the quarterly figures');
  const moved = [await sendToChannel(api, general, 'budgeting', 'first'), await sendToChannel(api, general, 'budgeting', 'second')];
  const deleted = await sendToChannel(api, general, 'two', 'quarterly numbers, soon gone');
  t.same(await search(api, 'quarterly'), [edited, deleted]);
  await api.patch(`/messages/${edited}`, { content: 'the monthly reports' });
  t.same(await search(api, 'quarterly'), [deleted], 'the old content is not found');
  t.same(await search(api, 'reported'), [edited], 'the new content is, by its stem');
  await api.patch(`/messages/${moved[0]}`, { topic: 'forecasting', propagate_mode: 'change_all', send_notification_to_new_thread: false, send_notification_to_old_thread: false });
  t.same(await search(api, 'budgets'), [], 'the old topic is not found');
  t.same(await search(api, 'forecasts'), moved, 'the new topic is, for every message moved');
  await api.delete(`/messages/${deleted}`);
  t.same(await search(api, 'quarterly'), [], 'a deleted message is not found');
});

t.test('private channel and direct message words are never found by others', async (t) => {
  const { api } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  const eve = await api.createUser('eve@example.com', 'Eve');
  const secret = await channel(api, 'secret', [1, ann.userId], { invite_only: true });
  const open = await channel(api, 'open', [1, ann.userId, eve.userId]);
  const hidden = await sendToChannel(api, secret, 'plans', 'the hidden treasures');
  const dm = await sendDirect(api, [ann.userId], 'more treasure maps');
  const visible = await sendToChannel(api, open, 'plans', 'no treasure here');
  t.same(await search(api.as(ann), 'treasured'), [hidden, dm, visible]);
  t.same(await search(api.as(eve), 'treasured'), [visible], 'only what Eve may read');
  t.same(await search(api.as(eve), 'hidden'), []);
  t.same(Object.keys((await api.as(eve).get('/messages/matches_narrow', { msg_ids: [hidden, dm, visible], narrow: [['search', 'treasure']] })).body.messages), [String(visible)]);
  t.same((await api.as(eve).get('/messages', { message_ids: [hidden, dm, visible], narrow: [['search', 'treasures']] })).body.messages.map((m: { id: number }) => m.id), [visible]);
});

t.test('a missing index is built again from the messages at boot', async (t) => {
  const first = await startTestServer(t);
  const general = await channel(first.api, 'general', [1]);
  const kept = await sendToChannel(first.api, general, 'notes', 'running late today');
  const changed = await sendToChannel(first.api, general, 'notes', 'placeholder');
  await first.api.patch(`/messages/${changed}`, { content: 'runners welcome' });
  await first.stop();
  for (const file of INDEX_FILES) rmSync(join(first.dataDir, file), { force: true });
  const second = await startTestServer(t, { dataDir: first.dataDir });
  t.ok(existsSync(join(first.dataDir, 'search.sqlite')));
  t.same(await search(second.api, 'runs'), [kept, changed]);
  t.same(await search(second.api, 'placeholder'), []);
});

t.test('an index behind the log (a crash between the log commit and the index write) catches up from the log', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const children: ChildServer[] = [];
  t.teardown(() => children.forEach((child) => child.process.kill('SIGKILL')));
  const start = async (env: Record<string, string> = {}) => {
    const child = await startChild(dataDir, env);
    children.push(child);
    return child;
  };
  const kill = async (child: ChildServer) => {
    child.process.kill('SIGKILL');
    await child.exited;
  };
  let server = await start();
  const general = await channel(server.api, 'general', [1]);
  const early = await sendToChannel(server.api, general, 'early', 'swimming lessons');
  const renamed = await sendToChannel(server.api, general, 'early', 'swimming pool');
  await kill(server);
  // A boot brings the index up to the log and snapshots there: the log from this point on stays.
  await kill(await start());
  // The index as it stood: everything after it is in the log alone, as after a crash right after commits.
  const saved = tempDir('chat-index-');
  t.teardown(() => rmSync(saved, { recursive: true, force: true }));
  for (const file of INDEX_FILES) if (existsSync(join(dataDir, file))) copyFileSync(join(dataDir, file), join(saved, file));
  server = await start();
  const later = await sendToChannel(server.api, general, 'late', 'swimming across the lake');
  await server.api.patch(`/messages/${early}`, { content: 'diving lessons' });
  await server.api.patch(`/messages/${renamed}`, { topic: 'lakeside', propagate_mode: 'change_one', send_notification_to_new_thread: false, send_notification_to_old_thread: false });
  const gone = await sendToChannel(server.api, general, 'late', 'swimmers wanted');
  await server.api.delete(`/messages/${gone}`);
  await kill(server);
  for (const file of INDEX_FILES) {
    rmSync(join(dataDir, file), { force: true });
    if (existsSync(join(saved, file))) copyFileSync(join(saved, file), join(dataDir, file));
  }
  server = await start({ CHAT_LOG_LEVEL: 'info' });
  t.match(server.output(), /"how":"log".*search index brought up to date/, 'from the log, not rebuilt');
  t.same(await search(server.api, 'swims'), [renamed, later], 'sends, edits and deletions after the index position are applied');
  t.same(await search(server.api, 'dive'), [early]);
  t.same(await search(server.api, 'lakesid'), [renamed], 'and moves');
  await kill(server);
});

t.test('an index behind the snapshot catches up from the log archive; with no archive kept it is built again', async (t) => {
  for (const retention of ['7d', '0']) {
    await t.test(`archive retention ${retention}`, async (t) => {
      const dataDir = tempDir();
      const saved = tempDir('chat-index-');
      const servers = childServers(t, [dataDir, saved]);
      const env = { CHAT_LOG_ARCHIVE_RETENTION: retention };
      let server = await servers.start(dataDir, env);
      const general = await channel(server.api, 'general', [1]);
      const early = await sendToChannel(server.api, general, 'early', 'swimming lessons');
      const renamed = await sendToChannel(server.api, general, 'early', 'swimming pool');
      await servers.stop(server);
      // The index as a clean stop left it, at the snapshot's position then.
      for (const file of INDEX_FILES) if (existsSync(join(dataDir, file))) copyFileSync(join(dataDir, file), join(saved, file));
      server = await servers.start(dataDir, env);
      const later = await sendToChannel(server.api, general, 'late', 'swimming across the lake');
      await server.api.patch(`/messages/${early}`, { content: 'diving lessons' });
      await server.api.patch(`/messages/${renamed}`, { topic: 'lakeside', propagate_mode: 'change_one', send_notification_to_new_thread: false, send_notification_to_old_thread: false });
      const gone = await sendToChannel(server.api, general, 'late', 'swimmers wanted');
      await server.api.delete(`/messages/${gone}`);
      // A clean stop snapshots: every change above is below the snapshot's position, none in the log after it.
      await servers.stop(server);
      for (const file of INDEX_FILES) {
        rmSync(join(dataDir, file), { force: true });
        if (existsSync(join(saved, file))) copyFileSync(join(saved, file), join(dataDir, file));
      }
      server = await servers.start(dataDir, { ...env, CHAT_LOG_LEVEL: 'info' });
      const repaired = /"from":(\d+),"to":(\d+),"how":"(\w+)".*search index (brought up to date|being built in the background)/.exec(server.output());
      t.ok(repaired, 'the index was behind');
      t.ok(Number(repaired![1]) < Number(repaired![2]));
      t.equal(repaired![3], retention === '0' ? 'building' : 'log', retention === '0' ? 'nothing kept: built again' : 'from the archive, not built again');
      if (retention === '0') t.match((await outputMatching(server, /"messages":(\d+),.*search index built/))[1], '3', 'every message');
      t.same(await search(server.api, 'swims'), [renamed, later], 'sends, edits and deletions the snapshot covers are in the index');
      t.same(await search(server.api, 'dive'), [early]);
      t.same(await search(server.api, 'lakesid'), [renamed], 'and moves');
      await servers.stop(server);
    });
  }
});

t.test('an index built again in the background: the server serves meanwhile, and what changes during the build is in it', async (t) => {
  const dataDir = tempDir();
  const servers = childServers(t, [dataDir]);
  // Written with the server's own code and no index, past what a boot replays from the log archive: the
  // first start builds the index from every message.
  const total = 24_000;
  const { store, runtime, realm, userIds, channelId } = await writeOrganization(dataDir, { users: 2, name: 'search', channel: 'general' });
  const send = (n: number, content: string) => runtime.execute(realm.realmId, {
    type: 'message.send', caller: { kind: 'user', userId: userIds[n % 2]! }, kind: 'channel', to: channelId, topic: `topic ${n % 10}`, content, client: 'API',
  });
  const ids: number[] = [];
  for (let n = 0; n < total; n += 1000) {
    const changes = await Promise.all(Array.from({ length: 1000 }, (_, i) => send(n + i, n + i === 0 ? 'the first sailboat' : n + i === total - 1 ? 'the last sailboat' : `ordinary message ${n + i}`)));
    for (const [change] of changes) ids.push(change?.type === 'message.sent' ? change.message.id : NaN);
  }
  const [first, last] = [ids[0]!, ids[total - 1]!];
  await runtime.snapshot();
  await store.close();
  const server = await servers.start(dataDir, { CHAT_LOG_LEVEL: 'info' });
  t.match(server.output(), /"from":0,"to":\d+,"how":"building".*search index being built in the background/);
  // Meanwhile: a search is refused with a clear error or already answered; every other request is served.
  const early = await server.api.get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: [{ operator: 'search', operand: 'sailboat' }] });
  if (early.status !== 200) t.match(early.body, { result: 'error', code: 'BAD_NARROW', msg: /search index is being built/ }, 'a search during the build');
  const newest = (await server.api.get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow: [['channel', 'general']] })).body.messages;
  t.match(newest, [{ id: last, content: '<p>the last sailboat</p>' }], 'a narrow without search is served');
  const added = await sendToChannel(server.api, channelId, 'late', 'a sailboat sent during the build');
  await server.api.patch(`/messages/${first}`, { content: 'the first rowboat' });
  await server.api.delete(`/messages/${last}`);
  const built = await outputMatching(server, /"messages":(\d+),.*search index built/);
  t.ok(Number(built[1]) >= total - 2, `the build wrote ${built[1]} messages`);
  t.same(await search(server.api, 'sailboat'), [added], 'the edit, the deletion and the send made during the build are in the index');
  t.same(await search(server.api, 'rowboat'), [first]);
  t.equal((await search(server.api, 'ordinary')).length, 1000, 'and the history (the newest 1,000 asked for)');
  await servers.stop(server);
});

t.test('a commit that fails during the background build stops it: the next start builds the index again from what is durable', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  // No log archive kept: the first start builds the index from every message.
  const written = await writeOrganization(dataDir, { users: 2, name: 'search', channel: 'general', archiveRetentionMs: 0 });
  const realmId = written.realm.realmId;
  const owner = { kind: 'user', userId: written.userIds[0]! } as const;
  // 3,000 messages, so that the build reads them in two slices of 2,000 ids (BUILD_SLICE): the edited one
  // is in the second.
  const ids: number[] = [];
  for (let n = 0; n < 3000; n += 500) {
    const changes = await Promise.all(Array.from({ length: 500 }, (_, i) => written.runtime.execute(realmId, {
      type: 'message.send', caller: owner, kind: 'channel', to: written.channelId, topic: 'history', content: n + i === 2500 ? 'the original sailboat' : `ordinary message ${n + i}`, client: 'API',
    })));
    for (const [change] of changes) ids.push(change?.type === 'message.sent' ? change.message.id : NaN);
  }
  const edited = ids[2500]!;
  t.ok(edited >= 2000 && edited < 4000, `message ${edited} is in the second slice`);
  await written.runtime.snapshot();
  await written.store.close();

  // The server's boot, done here so that the test decides when the build moves on: it waits, after each
  // slice is written, for the test to let it go.
  const store = new Store(dataDir, { waitForFlush: true });
  const index = new SqliteSearchIndex(dataDir);
  const runtime = new Runtime(store, { search: index, clock: { now: Date.now }, queues: { heartbeatMs: 50_000, idleTimeoutMs: 600_000, sweepMs: 1000 } });
  let open = true;
  const close = async () => {
    if (!open) return;
    open = false;
    await index.close();
    await store.close();
  };
  t.teardown(close);
  runtime.recover();
  const settled = index.settled.bind(index);
  const held: (() => void)[] = [];
  let onHeld: (() => void) | null = null;
  const sliceWritten = () => new Promise<void>((resolve) => (held.length > 0 ? resolve() : (onHeld = resolve)));
  index.settled = async () => {
    await settled();
    await new Promise<void>((release) => {
      held.push(release);
      onHeld?.();
      onHeld = null;
    });
  };
  const repaired = runtime.repairSearchIndex()!;
  t.equal(repaired.how, 'building');
  const built = repaired.built!.then(() => 'built', (error: Error) => error.message);
  await sliceWritten();

  // An edit whose commit is held while the build reads the second slice (with the edit applied in memory),
  // then fails: the runtime loads its state again, without the edit.
  let failCommit: (error: Error) => void = () => {};
  const appended = new Promise<void>((resolve) => {
    store.append = () => new Promise((_, reject) => {
      failCommit = reject;
      resolve();
    });
  });
  const edit = runtime.execute(realmId, { type: 'message.edit', caller: owner, messageId: edited, content: 'now a rowboat', propagateMode: 'change_one' });
  await appended;
  held.shift()!();
  await sliceWritten();
  failCommit(new StorageError('No space left on device'));
  await t.rejects(edit, /could not be saved/);
  index.settled = settled;
  for (const release of held.splice(0)) release();
  t.equal(await built, 'a commit failed during the search index build', 'the build stops');
  t.equal(index.position(), 0, 'with the index\'s position still 0');
  t.throws(() => runtime.searchIndex(), /search index could not be built/);
  await close();

  // The next start builds it again, from what the disk holds: the message as it was before the edit.
  const server = await startTestServer(t, { dataDir, rateLimit: null });
  for (;;) {
    const answer = await server.api.get('/messages', { anchor: 'newest', num_before: 1, num_after: 0, narrow: [{ operator: 'search', operand: 'sailboat' }] });
    if (answer.status === 200) break;
    t.match(answer.body, { code: 'BAD_NARROW', msg: /being built/ });
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  t.same(await search(server.api, 'sailboat'), [edited], 'the message is found by its durable text');
  t.same(await search(server.api, 'rowboat'), [], 'and not by the edit that failed');
});

t.test('other requests are answered while a search reads a long history', async (t) => {
  const { api } = await startTestServer(t, { rateLimit: null });
  const ann = await api.createUser('ann@example.com', 'Ann');
  const general = await channel(api, 'general', [1, ann.userId]);
  // One message of Ann's, then many of the owner's with the same word: a search for her messages with that
  // word reads every match in the index, newest first, and checks each one's sender.
  const hers = await sendToChannel(api.as(ann), general, 'bulk', 'common ground');
  const batch = 200;
  for (let i = 0; i < 20; i++) await Promise.all(Array.from({ length: batch }, (_, j) => sendToChannel(api, general, 'bulk', `common word ${i * batch + j}`)));
  let searching = true;
  const searched = search(api, 'common', [['sender', ann.userId]]).finally(() => (searching = false));
  let answered = 0;
  while (searching) {
    const me = await api.get('/users/me');
    t.equal(me.status, 200);
    if (searching) answered++;
  }
  t.same(await searched, [hers]);
  t.ok(answered >= 1, `GET /users/me answered ${answered} times while the search ran`);
});
