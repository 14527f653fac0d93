import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { childServers, type ChildServer } from './helpers/child.ts';
import { cli } from './helpers/cli.ts';
import { openSocket, type EventSocketClient, type Frame } from './helpers/event-socket.ts';
import { HostClient } from './helpers/host-client.ts';
import { gif, png } from './helpers/images.ts';
import { fetchIds, sendToChannel } from './helpers/messages.ts';
import { startNatsCluster } from './helpers/nats.ts';
import { ApiClient, readZuliprc, tempDir, type Credentials } from './helpers/server.ts';

// Three NATS servers and up to four nodes per subtest, each a process of its own: minutes on a loaded machine.
t.setTimeout(600_000);

// Three chat nodes over a three-server JetStream cluster (R3), all on loopback: the cluster mode of issue 16.

interface Health {
  cluster: { node_id: string; role: 'primary' | 'replica'; primary: string | null; applied_stream_position: number; stream_position: number };
}

async function health(node: ChildServer): Promise<Health | null> {
  try {
    const response = await fetch(`${node.url}/health`);
    return (await response.json()) as Health;
  } catch {
    return null;
  }
}

/** Polls `check` until it returns a value (no fixed sleeps: only the wait between polls). */
async function waitFor<T>(what: string, check: () => Promise<T | null | undefined>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== null && value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const NAMES = ['a', 'b', 'c'];
const CHANNEL = [{ operator: 'channel', operand: 'cluster' }];

const alive = (node: ChildServer) => node.process.exitCode === null && node.process.signalCode === null;

async function primaryOf(nodes: ChildServer[], dirs: string[]): Promise<number> {
  return waitFor('a primary', async () => {
    for (let i = 0; i < nodes.length; i++) {
      if (!alive(nodes[i]!)) continue;
      const state = await health(nodes[i]!);
      if (state?.cluster.role === 'primary' && existsSync(join(dirs[i]!, 'zuliprc'))) return i;
    }
    return null;
  });
}

t.test('cluster mode needs both --cluster and --node-id, and checks them', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const withoutCluster = await cli('serve', '--node-id', 'a', '--port', '0', '--data-dir', dir);
  t.equal(withoutCluster.code, 2);
  t.match(withoutCluster.stderr, /--node-id \(CHAT_NODE_ID\) needs --cluster/);
  const withoutNode = await cli('serve', '--cluster', 'nats://127.0.0.1:4222', '--port', '0', '--data-dir', dir);
  t.equal(withoutNode.code, 2);
  t.match(withoutNode.stderr, /--cluster needs --node-id/);
  const badUrl = await cli('serve', '--cluster', 'http://127.0.0.1:4222', '--node-id', 'a', '--port', '0', '--data-dir', dir);
  t.match(badUrl.stderr, /nats:\/\/HOST:PORT/);
});

/**
 * A node listens once JetStream answers its set-up, which it waits for itself (30 s, SETUP_WAIT_MS, then it
 * exits saying why): the test waits longer, so that it reports the node's own reason.
 */
const CLUSTER_NODE = { startTimeoutMs: 60_000 };

t.test('three nodes: reads anywhere, writes forwarded, queues on their node, failover without loss', async (t) => {
  const nats = await startNatsCluster(t);
  const dirs = [tempDir(), tempDir(), tempDir()];
  const servers = childServers(t, dirs, CLUSTER_NODE);
  const env = (node: string) => ({ CHAT_CLUSTER: nats.urls.join(','), CHAT_NODE_ID: node, CHAT_CLUSTER_LEASE_SECONDS: '2' });
  const nodes = await Promise.all(NAMES.map((name, i) => servers.start(dirs[i]!, env(name))));
  const first = await primaryOf(nodes, dirs);
  const promotedAt = Date.now();
  const owner: Credentials = readZuliprc(join(dirs[first]!, 'zuliprc'));
  const api = (node: ChildServer) => new ApiClient(node.url, owner);
  const replicas = nodes.filter((_, i) => i !== first);
  const [b, c] = replicas as [ChildServer, ChildServer];

  await t.test('a write through a replica is read at once through another', async (t) => {
    const user = await api(b).createUser('reader@example.com');
    // The new account's key works at once on the other replica: its read waited for the primary's position.
    const me = await api(c).as(user).get('/users/me');
    t.equal(me.status, 200, 'the other replica knows the account created through the first');
    const subscribed = await api(b).post('/users/me/subscriptions', { subscriptions: [{ name: 'cluster' }], principals: [user.userId] });
    t.equal(subscribed.status, 200);
    const id = await sendToChannel(api(b), 'cluster', 'replicated', 'written through a replica');
    t.ok((await fetchIds(api(c), CHANNEL)).includes(id), 'read through another replica at once');
    t.ok((await fetchIds(api(nodes[first]!), CHANNEL)).includes(id), 'and through the primary');
    const state = await health(b);
    t.ok(state!.cluster.applied_stream_position > 0, '/health shows the applied stream position');
    t.equal(state!.cluster.primary, NAMES[first], '/health names the primary');
    const metrics = await (await fetch(`${b.url}/metrics`)).text();
    t.match(metrics, /chat_cluster_forwarded_requests [1-9]/, '/metrics counts the forwarded writes');
  });

  await t.test("a long-poll on one replica gets a message sent through the other; the queue is its node's", async (t) => {
    const { queueId } = await api(b).register({ event_types: ['message'] });
    t.ok(queueId.startsWith(`${NAMES[nodes.indexOf(b)]}:`), 'the queue id names its node');
    const poll = api(b).get('/events', { queue_id: queueId, last_event_id: -1 });
    const id = await sendToChannel(api(c), 'cluster', 'replicated', 'sent through c');
    const events = (await poll).body.events as { type: string; message?: { id: number } }[];
    t.ok(events.some((event) => event.type === 'message' && event.message?.id === id), 'the held poll on b got it');
    // The same queue polled through c: forwarded to b, which holds it.
    const id2 = await sendToChannel(api(nodes[first]!), 'cluster', 'replicated', 'sent through the primary');
    const through = await api(c).get('/events', { queue_id: queueId, last_event_id: events.at(-1)!.type === 'message' ? (events.at(-1) as { id?: number }).id ?? 0 : 0 });
    t.equal(through.status, 200, "a poll of b's queue through c is answered by b");
    t.ok((through.body.events as { message?: { id: number } }[]).some((event) => event.message?.id === id2));
    // Typing (never logged) through c reaches a queue on b too.
    const reader = await api(c).createUser('typing-reader@example.com');
    const { queueId: typingQueue } = await api(b).as(reader).register({ event_types: ['typing'] });
    const typingPoll = api(b).as(reader).get('/events', { queue_id: typingQueue, last_event_id: -1 });
    t.equal((await api(c).post('/typing', { op: 'start', to: JSON.stringify([reader.userId]) })).status, 200);
    const typing = (await typingPoll).body.events as { type: string; op?: string }[];
    t.ok(typing.some((event) => event.type === 'typing' && event.op === 'start'), 'a typing notification sent through c reached the queue on b');
    // A presence report through c is known on b (shortly: it is shared outside the log).
    t.equal((await api(c).as(reader).post('/users/me/presence', { status: 'active' })).status, 200);
    await waitFor('the presence report on b', async () => {
      const presences = (await api(b).get('/realm/presence')).body.presences as Record<string, unknown>;
      return presences[reader.email] ? true : null;
    });
    t.pass('a presence report through c shows on b');
    const removed = await api(c).delete('/events', { queue_id: queueId });
    t.equal(removed.status, 200, 'so is its removal');
    t.equal((await api(b).get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true })).body.code, 'BAD_EVENT_QUEUE_ID');
  });

  await t.test("an event WebSocket that reaches another node than its queue's is relayed there", async (t) => {
    /** Frames until one holds the message `id`; the last event id seen. */
    const until = async (socket: EventSocketClient, id: number): Promise<number> => {
      for (;;) {
        const frame: Frame = await socket.next(15_000);
        const events = (frame.events ?? []) as { id: number; type: string; message?: { id: number } }[];
        if (events.some((event) => event.type === 'message' && event.message?.id === id)) return events.at(-1)!.id;
      }
    };
    const { queueId } = await api(b).register({ event_types: ['message'] });
    const socket = await openSocket(c.url, { queueId, lastEventId: -1, credentials: owner });
    const first = await sendToChannel(api(c), 'cluster', 'socket', 'to a socket relayed by c');
    const acknowledged = await until(socket, first);
    t.pass("b's queue delivers through a socket opened at c");
    socket.acknowledge(acknowledged);
    const second = await sendToChannel(api(b), 'cluster', 'socket', 'and the next one');
    t.ok((await until(socket, second)) > acknowledged, 'the acknowledgement went through: the next frame holds only what followed');
    await socket.close();
    // A browser's ticket is good at the node that issued it; the queue's node still takes the socket.
    const ticket = (await api(c).post('/events/socket/ticket')).body.ticket as string;
    const withTicket = await openSocket(c.url, { queueId, lastEventId: acknowledged, ticket });
    const third = await sendToChannel(api(c), 'cluster', 'socket', 'to a ticket holder');
    await until(withTicket, third);
    t.pass('a socket opened with a ticket at c is relayed too');
    await withTicket.close();
    // Someone else's key: b refuses, and c passes the refusal on.
    const other = await api(c).createUser('socket-other@example.com');
    const refused = await openSocket(c.url, { queueId, lastEventId: -1, credentials: other });
    t.equal((await refused.next()).code, 'BAD_EVENT_QUEUE_ID', "b's answer to a caller the queue is not for");
    t.equal((await refused.closed).code, 4400);
    // A queue of a node that is gone: the client hears it and registers again.
    const gone = await openSocket(c.url, { queueId: 'gone-node:0123456789', lastEventId: -1, credentials: owner });
    t.equal((await gone.next()).code, 'BAD_EVENT_QUEUE_ID');
    t.equal((await gone.closed).code, 4400, 'closed with 4400');
    t.match((await (await fetch(`${c.url}/metrics`)).text()), /chat_cluster_forwarded_requests [1-9]/);
  });

  const files = (node: ChildServer) => new HostClient(node.url, new URL(node.url).host, owner);
  /** The organization's files taken through b (the primary stored them), and their bytes. */
  const uploaded = new Map<string, Buffer>();
  /** Each file of `uploaded` as `node` serves it. */
  const served = async (t: Test, node: ChildServer, which: string) => {
    for (const [path, bytes] of uploaded) {
      const answer = await files(node).get(path);
      t.equal(answer.status, 200, `${path} is served ${which}`);
      t.ok(answer.bytes.equals(bytes), 'whole');
    }
  };

  await t.test('a file, an avatar and custom emoji uploaded through a replica are served through another', async (t) => {
    const upload = await files(b).upload('notes.txt', 'kept by the cluster');
    t.equal(upload.status, 200, upload.text);
    const avatar = await files(b).postFile('/users/me/avatar', 'me.png', png([10, 200, 10, 255]));
    t.equal(avatar.status, 200, avatar.text);
    t.equal((await files(b).postFile('/realm/emoji/party', 'party.gif', gif(3))).status, 200);
    const party = Object.values((await files(b).ok('GET', '/realm/emoji')).body.emoji as Record<string, { source_url: string; still_url: string }>)[0]!;
    const paths = [upload.body.url as string, new URL(avatar.body.avatar_url as string, b.url).pathname, party.source_url, party.still_url];
    for (const path of paths) {
      const answer = await files(nodes[first]!).get(path);
      t.equal(answer.status, 200, `the primary, which took ${path}, serves it`);
      uploaded.set(path, answer.bytes);
    }
    t.equal(uploaded.get(paths[0]!)!.toString(), 'kept by the cluster');
    await served(t, c, 'through the other replica');
  });

  await t.test('a replica drops its copy of a file once the primary removed it (attachment deleted, avatar replaced)', async (t) => {
    const dirOfC = dirs[nodes.indexOf(c)]!;
    const member = await api(b).createUser('avatar-owner@example.com');
    const asMember = files(b).as(member);
    const upload = await files(b).upload('gone.txt', 'deleted soon');
    const avatar = await asMember.postFile('/users/me/avatar', 'me.png', png([200, 10, 10, 255]));
    t.equal(avatar.status, 200, avatar.text);
    const uploadPath = upload.body.url as string;
    const avatarPath = new URL(avatar.body.avatar_url as string, b.url).pathname;
    for (const path of [uploadPath, avatarPath]) t.equal((await files(c).get(path)).status, 200, `c serves ${path}`);
    const copies = [join(dirOfC, 'uploads', uploadPath.replace('/user_uploads/', '')), join(dirOfC, 'avatars', avatarPath.replace('/user_avatars/', ''))];
    t.same(copies.map((copy) => existsSync(copy)), [true, true], 'c kept a copy of each file it served');

    const attachment = ((await api(b).get('/attachments')).body.attachments as { id: number; path_id: string }[]).find((entry) => uploadPath.endsWith(entry.path_id))!;
    t.equal((await api(b).delete(`/attachments/${attachment.id}`)).status, 200);
    t.equal((await asMember.postFile('/users/me/avatar', 'again.png', png([10, 10, 200, 255]))).status, 200);
    await waitFor("c's copies to go", async () => (copies.some((copy) => existsSync(copy)) ? null : true));
    t.pass('c removed its copies as it applied the records that removed the files');
    t.equal((await files(c).get(avatarPath)).status, 404, 'the replaced avatar is no longer served through c');
  });

  await t.test('a data export requested through a replica is downloaded through another', async (t) => {
    const requested = await api(b).post('/export/realm');
    t.equal(requested.status, 200, JSON.stringify(requested.body));
    const done = await waitFor('the export', async () => {
      const list = await api(c).get('/export/realm');
      const entry = (list.body.exports as { id: number; pending: boolean; export_url: string | null; failed_timestamp: number | null }[]).find((e) => e.id === requested.body.id);
      return entry && !entry.pending ? entry : null;
    }, 120_000);
    t.equal(done.failed_timestamp, null, 'it did not fail');
    const basic = `Basic ${Buffer.from(`${owner.email}:${owner.key}`).toString('base64')}`;
    // export_url is at the organization's URL; each node is asked for the same path.
    for (const node of [c, b]) {
      const answer = await fetch(new URL(new URL(done.export_url!).pathname, node.url), { headers: { Authorization: basic } });
      t.equal(answer.status, 200, 'a replica answers with the file the primary wrote');
      t.ok((await answer.arrayBuffer()).byteLength > 0);
    }
  });

  await t.test("the primary's queues stay reachable through a replica after its address would have expired", async (t) => {
    const { queueId } = await api(nodes[first]!).register({ event_types: ['message'] });
    // Node addresses expire after three leases (6 s here) unless renewed: past that, with a margin for the
    // NATS expiry timer (a lower bound only, so a slow machine cannot make this pass or fail wrongly).
    const pastExpiry = promotedAt + 9_000 - Date.now();
    if (pastExpiry > 0) await new Promise((resolve) => setTimeout(resolve, pastExpiry));
    const through = await api(b).get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
    t.equal(through.status, 200, "a poll of the primary's queue through a replica is answered by the primary");
  });

  await t.test('a paused primary is replaced, cannot append once it resumes, and catches up when restarted', async (t) => {
    const old = nodes[first]!;
    old.process.kill('SIGSTOP');
    const next = await waitFor('a primary other than the paused one', async () => {
      for (const node of [b, c]) if ((await health(node))?.cluster.role === 'primary') return node;
      return null;
    });
    const during = await sendToChannel(api(next), 'cluster', 'failover', 'while the old primary was paused');
    old.process.kill('SIGCONT');
    // Straight away, before it may have noticed: its append expects a stream position the new primary moved past.
    const late = await api(old).post('/messages', { type: 'stream', to: 'cluster', topic: 'failover', content: 'from the deposed primary' }).catch(() => null);
    t.equal(await old.exited, 75, 'the deposed primary stops (exit 75: restart it as a replica)');
    // The node that took the files is gone; b forwarded their uploads and has not read them since.
    await served(t, b, 'with the node that took them stopped, through a node that never had them');
    if (late?.status === 200) t.ok((await fetchIds(api(next), CHANNEL)).includes(late.body.id), 'a write it acknowledged is in the cluster');
    else t.pass('its late write was refused');
    // Restarted on its own data directory, it follows the stream from where its log ends.
    const restarted = await servers.start(dirs[first]!, env(NAMES[first]!));
    nodes[first] = restarted;
    t.ok((await fetchIds(api(restarted), CHANNEL)).includes(during), 'the restarted node caught up with what it missed');
    t.equal((await health(restarted))?.cluster.role, 'replica', 'and serves as a replica');
    // A node with an empty data directory joins from the stream.
    const joinDir = tempDir();
    dirs.push(joinDir);
    const joined = await servers.start(joinDir, env('d'));
    t.ok((await fetchIds(api(joined), CHANNEL)).includes(during), 'a new node with an empty data directory has the whole history');
    await servers.stop(joined);
  });

  await t.test('SIGKILL of the primary under writes: another node takes over, no acknowledged write is lost', async (t) => {
    const acknowledged: number[] = [];
    let writing = true;
    let failedWrites = 0;
    const writer = async (node: ChildServer, n: number) => {
      for (let i = 0; writing; i++) {
        const result = await api(node).post('/messages', { type: 'stream', to: 'cluster', topic: 'load', content: `w${n}-${i}` }).catch(() => null);
        if (result?.status === 200) acknowledged.push(result.body.id);
        else {
          failedWrites++;
          // No primary for a moment: the next try waits a little rather than spin.
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
    };
    const primary = nodes[await primaryOf(nodes, dirs)]!;
    const survivors = nodes.filter((node) => node !== primary);
    const writers = nodes.map((node, n) => writer(node, n));
    await waitFor('writes before the kill', async () => (acknowledged.length >= 50 ? true : null));
    const killedAt = Date.now();
    primary.process.kill('SIGKILL');
    await primary.exited;
    const before = acknowledged.length;
    await waitFor('writes after the failover', async () => (acknowledged.length >= before + 50 ? true : null));
    const failover = await waitFor('a new primary', async () => {
      for (const node of survivors) if ((await health(node))?.cluster.role === 'primary') return Date.now() - killedAt;
      return null;
    });
    writing = false;
    await Promise.all(writers);
    t.ok(failover < 10_000, `a survivor took over within 10 s (${failover} ms)`);
    t.comment(`${acknowledged.length} writes acknowledged, ${failedWrites} refused or cut off during the failover`);
    for (const node of survivors) {
      const ids = new Set(await fetchIdsAll(api(node)));
      const missing = acknowledged.filter((id) => !ids.has(id));
      t.same(missing, [], `every acknowledged write is on ${node.url}`);
    }
    // Each survivor's data directory, stopped, verifies and holds the same.
    const summaries: string[] = [];
    for (const node of survivors) {
      await servers.stop(node);
      const dir = dirs[nodes.indexOf(node)]!;
      const verified = await cli('verify', '--data-dir', dir);
      t.equal(verified.code, 0, `verify passes on ${dir}: ${verified.stderr}`);
      summaries.push(verified.stdout.split('\n').slice(0, 2).join('\n').replace(/\d+ snapshot records, \d+ log entries replayed/, ''));
    }
    t.equal(summaries[0], summaries[1], 'both survivors hold the same log position and the same counts');
  });

  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

t.test("a new node joins from the stored snapshot after the stream's retention dropped the records before it", async (t) => {
  const nats = await startNatsCluster(t);
  const dirs = [tempDir(), tempDir(), tempDir()];
  t.teardown(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
  const servers = childServers(t, dirs, CLUSTER_NODE);
  const env = (node: string) => ({
    CHAT_CLUSTER: nats.urls.join(','), CHAT_NODE_ID: node, CHAT_CLUSTER_LEASE_SECONDS: '2',
    CHAT_CLUSTER_SNAPSHOT_SECONDS: '0.5', CHAT_CLUSTER_RETENTION: '1s', CHAT_SNAPSHOT_SECONDS: '1',
  });
  const primary = await servers.start(dirs[0]!, env('p'));
  await primaryOf([primary], dirs);
  const owner: Credentials = readZuliprc(join(dirs[0]!, 'zuliprc'));
  const api = (node: ChildServer) => new ApiClient(node.url, owner);
  t.equal((await api(primary).post('/users/me/subscriptions', { subscriptions: [{ name: 'cluster' }] })).status, 200);
  // A queue of the primary's, in the snapshots it stores: not the new node's to hold.
  await api(primary).register({ event_types: ['message'] });
  const early: number[] = [];
  for (let i = 0; i < 200; i++) early.push(await sendToChannel(api(primary), 'cluster', 'early', `zebrafish number ${i} of the early ones`));
  const form = new FormData();
  form.append('file', new Blob(['kept in the stored snapshot']), 'kept.txt');
  const basic = `Basic ${Buffer.from(`${owner.email}:${owner.key}`).toString('base64')}`;
  const upload = await fetch(`${primary.url}/api/v1/user_uploads`, { method: 'POST', headers: { Authorization: basic }, body: form });
  const uploaded = (await upload.json()) as { url: string };
  t.equal(upload.status, 200, `the upload is taken: ${JSON.stringify(uploaded)}`);
  // A replica that has the early records, then is down while the stream drops what follows them.
  let behind = await servers.start(dirs[2]!, env('r'));
  t.ok((await fetchIds(api(behind), CHANNEL)).includes(early.at(-1)!), 'the replica has the early records');
  await servers.stop(behind);
  const nc = await connect({ servers: nats.urls });
  t.teardown(() => nc.close());
  const jsm = await jetstreamManager(nc);
  const earlyEnd = (await jsm.streams.info('CHAT_LOG')).state.last_seq;
  // Writes go on until the stream no longer holds the early records (a snapshot stored, then the next).
  const later: number[] = [];
  await waitFor('the stream to drop the early records', async () => {
    later.push(await sendToChannel(api(primary), 'cluster', 'later', `later ${later.length}`));
    return (await jsm.streams.info('CHAT_LOG')).state.first_seq > earlyEnd ? true : null;
  });
  t.comment(`the stream starts at ${(await jsm.streams.info('CHAT_LOG')).state.first_seq}; the early records ended at ${earlyEnd}`);

  const joined = await servers.start(dirs[1]!, env('q'));
  const ids = new Set(await fetchIdsAll(api(joined)));
  t.same([...early, ...later].filter((id) => !ids.has(id)), [], 'the new node has every message, the early ones too');
  const found = await api(joined).get('/messages', { anchor: 'newest', num_before: 1000, num_after: 0, narrow: [{ operator: 'search', operand: 'zebrafish' }] });
  t.same((found.body.messages as { id: number }[]).map((message) => message.id).sort((x, y) => x - y), early, 'search finds the early ones');
  const first = await api(joined).get(`/messages/${early[0]}`, { apply_markdown: false });
  t.equal(first.body.message.content, 'zebrafish number 0 of the early ones', 'with their bodies');
  const file = await fetch(`${joined.url}${uploaded.url}`, { headers: { Authorization: basic } });
  t.equal(file.status, 200);
  t.equal(await file.text(), 'kept in the stored snapshot', "and the organization's files");
  // And it goes on following the stream.
  const after = await sendToChannel(api(primary), 'cluster', 'later', 'after the join');
  t.ok((await fetchIds(api(joined), CHANNEL)).includes(after), 'a write after the join reaches it');
  t.equal((await health(joined))?.cluster.role, 'replica');
  t.match(await (await fetch(`${joined.url}/metrics`)).text(), /^chat_event_queues 0$/m, "the primary's queues stayed the primary's");
  t.match(await (await fetch(`${primary.url}/metrics`)).text(), /^chat_event_queues 1$/m);

  // The replica that was down: its log stops before the stream's first record, so it starts over from the snapshot.
  behind = await servers.start(dirs[2]!, env('r'));
  const caughtUp = new Set(await fetchIdsAll(api(behind)));
  t.same([...early, ...later, after].filter((id) => !caughtUp.has(id)), [], 'the replica left behind has the whole history again');
  t.ok(existsSync(join(dirs[2]!, 'data.mdb.behind')), 'its old LMDB file is set aside');
});

t.test("a write forwarded to the primary spends the caller's rate limit once, at the primary", async (t) => {
  const nats = await startNatsCluster(t);
  const dirs = [tempDir(), tempDir()];
  t.teardown(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
  const servers = childServers(t, dirs, CLUSTER_NODE);
  const LIMIT = 10;
  const env = (node: string) => ({ CHAT_CLUSTER: nats.urls.join(','), CHAT_NODE_ID: node, CHAT_CLUSTER_LEASE_SECONDS: '2', CHAT_RATE_LIMIT: `${LIMIT}/3600` });
  const primary = await servers.start(dirs[0]!, env('p'));
  await primaryOf([primary], dirs);
  const replica = await servers.start(dirs[1]!, env('r'));
  const owner: Credentials = readZuliprc(join(dirs[0]!, 'zuliprc'));
  const user = await new ApiClient(primary.url, owner).createUser('budget@example.com');
  const at = (node: ChildServer) => new ApiClient(node.url, user);
  const writes = 6;
  for (let i = 0; i < writes; i++) {
    t.equal((await at(replica).patch('/settings', { full_name: `Budget ${i}` })).status, 200, `write ${i} through the replica`);
  }
  // The replica gave its share back: all its budget is left for what it serves itself.
  for (let i = 0; i < LIMIT; i++) t.equal((await at(replica).get('/users/me')).status, 200, `read ${i} at the replica`);
  t.equal((await at(replica).get('/users/me')).status, 429, 'and no more');
  // The primary counted each forwarded write, once.
  for (let i = writes; i < LIMIT; i++) t.equal((await at(primary).get('/users/me')).status, 200, `request ${i} at the primary`);
  t.equal((await at(primary).get('/users/me')).status, 429, 'the primary counted the forwarded writes');
});

/** Every message id in the organization, 1000 at a time. */
async function fetchIdsAll(api: ApiClient): Promise<number[]> {
  const ids: number[] = [];
  let anchor: number | string = 'oldest';
  for (;;) {
    const result = await api.get('/messages', { anchor, num_before: 0, num_after: 1000, narrow: CHANNEL });
    const page = (result.body.messages as { id: number }[]).map((message) => message.id).filter((id) => id !== anchor);
    ids.push(...page);
    if (result.body.found_newest || page.length === 0) return ids;
    anchor = page.at(-1)!;
  }
}
