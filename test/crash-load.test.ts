import { copyFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { random } from './helpers/random.ts';
import { startChild, type ChildServer } from './helpers/child.ts';
import { cli } from './helpers/cli.ts';
import { startTestServer, tempDir, type ApiClient, type Credentials } from './helpers/server.ts';

// Each case starts servers or commands as processes of their own (tsx, about a second of CPU each): with
// the CPU shared (the suite's other file, or a loaded machine) the file takes minutes, beyond the suite's 120 s.
t.setTimeout(600_000);

/**
 * Crash under load: a client writes continuously and concurrently (channel messages, drafts, a subscription
 * property, a personal setting) and reads while it writes; the server is SIGKILLed at a random moment of each
 * round. After each restart every write that was acknowledged is there, every message a reader was shown is
 * there, and a write that was not acknowledged is either wholly there (content, indexes, unread flags) or
 * absent; `chat-server verify` accepts the directory the crash left.
 */

/** CI's default; bench/soak.ts runs a hundred. */
const ROUNDS = Number(process.env.CRASH_ROUNDS ?? 8);
const PASSWORD = 'crash-Load-passw0rd';

const SEED = Number(process.env.CRASH_SEED ?? 20261122);

async function verify(dataDir: string): Promise<{ code: number; output: string }> {
  const { code, stdout, stderr } = await cli('verify', '--data-dir', dataDir);
  return { code, output: stdout + stderr };
}

interface Write<V> {
  value: V;
  round: number;
  acked: boolean;
  /** the server's id, from the acknowledgement */
  id?: number;
}

/** What the client did, and what the server told it. */
class Model {
  readonly messages = new Map<string, Write<string>>();
  readonly drafts = new Map<string, Write<string>>();
  /** sequential writers (one request in flight): their values in the order sent */
  readonly colors: Write<string>[] = [];
  readonly fontSizes: Write<number>[] = [];
  /** message id -> content, for every message a GET /messages answer showed before the crash */
  readonly seen = new Map<number, string>();
  failures: string[] = [];

  /** The values a sequential writer may hold after a crash: the last acknowledged one and any sent after it. */
  static possible<V>(writes: Write<V>[], initial: V): V[] {
    let last = -1;
    writes.forEach((write, index) => {
      if (write.acked) last = index;
    });
    return [last < 0 ? initial : writes[last]!.value, ...writes.slice(last + 1).map((write) => write.value)];
  }
}

const messageToken = (round: number, n: number) => `k${round}x${n}z`;
const colorFor = (n: number) => `#${(0x100000 + n).toString(16)}`;

interface Load {
  stop(): void;
  done: Promise<void>;
}

/** Runs the workers against a server until stopped. A request that gets no answer is simply not acknowledged. */
function startLoad(round: number, owner: ApiClient, model: Model, streamId: number): Load {
  let stopped = false;
  let messageCounter = 0;
  let draftCounter = 0;
  const topic = `r${round}`;
  const attempt = async (send: () => Promise<{ status: number; body: any }>, onAck: (body: any) => void, what: string) => {
    try {
      const response = await send();
      if (response.status === 200) onAck(response.body);
      else model.failures.push(`${what}: HTTP ${response.status} ${JSON.stringify(response.body)}`);
    } catch {
      // the connection died with the server: not acknowledged
    }
  };
  const messageWorker = async () => {
    while (!stopped) {
      const token = messageToken(round, messageCounter++);
      const write: Write<string> = { value: token, round, acked: false };
      model.messages.set(token, write);
      await attempt(() => owner.post('/messages', { type: 'stream', to: String(streamId), topic, content: `load ${token} end` }), (body) => {
        write.acked = true;
        write.id = body.id;
      }, `send ${token}`);
    }
  };
  const draftWorker = async () => {
    while (!stopped) {
      const token = `d${round}x${draftCounter++}z`;
      const write: Write<string> = { value: token, round, acked: false };
      model.drafts.set(token, write);
      const drafts = [{ type: 'stream', to: [streamId], topic, content: `draft ${token}`, timestamp: 1_700_000_000 }];
      await attempt(() => owner.post('/drafts', { drafts }), (body) => {
        write.acked = true;
        write.id = body.ids[0];
      }, `draft ${token}`);
    }
  };
  const colorWorker = async () => {
    while (!stopped) {
      const write: Write<string> = { value: colorFor(model.colors.length), round, acked: false };
      model.colors.push(write);
      const data = [{ stream_id: streamId, property: 'color', value: write.value }];
      await attempt(() => owner.post('/users/me/subscriptions/properties', { subscription_data: data }), () => (write.acked = true), `color ${write.value}`);
    }
  };
  const settingsWorker = async () => {
    while (!stopped) {
      const write: Write<number> = { value: 100 + model.fontSizes.length, round, acked: false };
      model.fontSizes.push(write);
      await attempt(() => owner.patch('/settings', { web_font_size_px: write.value }), () => (write.acked = true), `font ${write.value}`);
    }
  };
  const readerWorker = async () => {
    while (!stopped) {
      await attempt(() => owner.get('/messages', { anchor: 'newest', num_before: 30, num_after: 0, apply_markdown: false, narrow: [{ operator: 'channel', operand: streamId }, { operator: 'topic', operand: topic }] }), (body) => {
        for (const message of body.messages) model.seen.set(message.id, message.content);
      }, 'read');
    }
  };
  const workers = [messageWorker(), messageWorker(), messageWorker(), messageWorker(), draftWorker(), draftWorker(), colorWorker(), settingsWorker(), readerWorker()];
  return {
    stop: () => (stopped = true),
    done: Promise.all(workers).then(() => undefined),
  };
}

/** GET /messages of one topic, every message, oldest first. */
async function topicMessages(api: ApiClient, streamId: number, topic: string, extra: unknown[] = []): Promise<{ id: number; content: string; flags: string[] }[]> {
  const narrow = [{ operator: 'channel', operand: streamId }, { operator: 'topic', operand: topic }, ...extra];
  const result = await api.get('/messages', { anchor: 'newest', num_before: 5000, num_after: 0, narrow, apply_markdown: false });
  if (result.status !== 200) throw new Error(`fetch failed: ${JSON.stringify(result.body)}`);
  return result.body.messages;
}

const tokenOf = (content: string) => /^load (k\d+x\d+z) end$/.exec(content)?.[1] ?? null;

async function login(api: ApiClient, email: string): Promise<Credentials> {
  const fetched = await api.as(null).post('/fetch_api_key', { username: email, password: PASSWORD });
  if (fetched.status !== 200) throw new Error(`login failed: ${JSON.stringify(fetched.body)}`);
  return { email, key: fetched.body.api_key };
}

t.test(`crash under load: ${ROUNDS} rounds of SIGKILL at a random moment`, async (t) => {
  const dataDir = tempDir();
  const next = random(SEED);
  const model = new Model();
  let server: ChildServer | null = await startChild(dataDir);
  t.teardown(async () => {
    if (server && server.process.exitCode === null && server.process.signalCode === null) {
      server.process.kill('SIGKILL');
      await server.exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  });
  const ownerCredentials = server.owner;
  const created = await server.api.post('/users', { email: 'reader@example.com', password: PASSWORD, full_name: 'Reader' });
  t.equal(created.status, 200, 'the reading user is created');
  const readerId: number = created.body.user_id;
  const subscribed = await server.api.post('/users/me/subscriptions', { subscriptions: [{ name: 'load' }], principals: [1, readerId] });
  t.equal(subscribed.status, 200, 'the load channel is created');
  const streamId: number = (await server.api.get('/get_stream_id', { stream: 'load' })).body.stream_id;
  const readerCredentials = await login(server.api, 'reader@example.com');
  const initialColor: string = (await server.api.get('/users/me/subscriptions')).body.subscriptions.find((s: { stream_id: number }) => s.stream_id === streamId).color;
  const report: string[] = [];

  for (let round = 0; round < ROUNDS; round++) {
    // Odd rounds snapshot every 50 ms, so kills also land during snapshots and log trimming.
    const env: Record<string, string> = round % 2 ? { CHAT_SNAPSHOT_SECONDS: '0.05' } : {};
    const owner = server.api;
    const load = startLoad(round, owner, model, streamId);
    await new Promise((resolve) => setTimeout(resolve, 150 + Math.floor(next() * 350)));
    // On a loaded machine the random moment can come before the first commit: the kill waits for one, so
    // that every round tests acknowledged writes.
    while (model.failures.length === 0 && ![...model.messages.values()].some((w) => w.round === round && w.acked)) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    server.process.kill('SIGKILL');
    load.stop();
    t.equal(await server.exited, 'SIGKILL', `round ${round}: killed`);
    await load.done;
    server = null;

    // verify reads a copy of what the crash left (LMDB's file is consistent when no process has it open),
    // while the server restarts on the original.
    const killedAt = performance.now();
    const copy = tempDir();
    copyFileSync(join(dataDir, 'data.mdb'), join(copy, 'data.mdb'));
    const [verified, restarted] = await Promise.all([verify(copy), startChild(dataDir, env)]);
    rmSync(copy, { recursive: true, force: true });
    server = restarted;
    const startedAt = performance.now();
    t.equal(verified.code, 0, `round ${round}: verify accepts the directory the crash left`, { output: verified.output });
    t.match(verified.output, /OK/);
    const api = server.api.as(ownerCredentials);
    const reader = server.api.as(readerCredentials);

    // Messages: every acknowledged one of every round so far, in its topic, with its id; nothing unknown.
    const problems: string[] = [];
    let acked = 0;
    let found = 0;
    let unackedFound = 0;
    const byToken = new Map<string, { id: number; content: string; flags: string[]; round: number }>();
    for (let earlier = 0; earlier <= round; earlier++) {
      for (const message of await topicMessages(api, streamId, `r${earlier}`)) {
        const token = tokenOf(message.content);
        if (!token || !model.messages.has(token)) problems.push(`unknown message ${message.id}: ${message.content}`);
        else if (byToken.has(token)) problems.push(`message ${token} appears twice`);
        else byToken.set(token, { ...message, round: earlier });
      }
    }
    for (const [token, write] of model.messages) {
      const message = byToken.get(token);
      if (write.acked) {
        acked++;
        if (!message) problems.push(`acknowledged message ${token} (id ${write.id}) is missing`);
        else if (message.id !== write.id) problems.push(`message ${token} has id ${message.id}, acknowledged as ${write.id}`);
      }
      if (message) {
        found++;
        if (!write.acked) unackedFound++;
      }
    }
    for (const [id, content] of model.seen) {
      const token = tokenOf(content);
      if (!token || byToken.get(token)?.id !== id) problems.push(`message ${id} (${content}) was shown to a reader before the crash and is gone`);
    }

    // This round's messages, acknowledged or not, are whole: fetched by id, unread for the other subscriber,
    // found by search and by the unread narrow, read for their sender.
    const thisRound = [...byToken.entries()].filter(([, message]) => message.round === round);
    const unread = new Set((await topicMessages(reader, streamId, `r${round}`, [{ operator: 'is', operand: 'unread' }])).map((m) => m.id));
    for (const [token, message] of thisRound) {
      const single = await reader.get(`/messages/${message.id}`, { apply_markdown: false });
      if (single.status !== 200 || single.body.raw_content !== `load ${token} end`) problems.push(`GET /messages/${message.id} (${token}): ${JSON.stringify(single.body)}`);
      else if (single.body.message.flags.includes('read')) problems.push(`message ${token} is read for a subscriber who never read it`);
      if (!unread.has(message.id)) problems.push(`message ${token} is missing from the unread narrow`);
      if (!message.flags.includes('read')) problems.push(`message ${token} is unread for its sender`);
    }
    const sample = thisRound.filter((_, index) => index % 7 === 0);
    for (const [token, message] of sample) {
      const searched = await reader.get('/messages', { anchor: 'newest', num_before: 10, num_after: 0, narrow: [{ operator: 'search', operand: token }], apply_markdown: false });
      const ids = searched.body.messages?.map((m: { id: number }) => m.id) ?? [];
      if (ids.length !== 1 || ids[0] !== message.id) problems.push(`search for ${token} found ${JSON.stringify(ids)}, not ${message.id}`);
    }
    if (unread.size !== thisRound.length) problems.push(`unread narrow has ${unread.size} messages, the topic ${thisRound.length}`);

    // Drafts: every acknowledged one, nothing unknown.
    const drafts = await api.get('/drafts');
    const draftsByToken = new Map<string, number>();
    for (const draft of drafts.body.drafts as { id: number; content: string }[]) {
      const token = /^draft (d\d+x\d+z)$/.exec(draft.content)?.[1];
      if (!token || !model.drafts.has(token)) problems.push(`unknown draft ${draft.id}: ${draft.content}`);
      else draftsByToken.set(token, draft.id);
    }
    let draftsAcked = 0;
    for (const [token, write] of model.drafts) {
      if (!write.acked) continue;
      draftsAcked++;
      if (draftsByToken.get(token) !== write.id) problems.push(`acknowledged draft ${token} (id ${write.id}) is missing`);
    }

    // Sequential writers: the last acknowledged value, or one sent after it.
    const color = (await api.get('/users/me/subscriptions')).body.subscriptions.find((s: { stream_id: number }) => s.stream_id === streamId).color;
    const colors = Model.possible(model.colors, initialColor);
    if (!colors.includes(color)) problems.push(`color ${color} is none of ${colors.join(', ')}`);
    const registered = await api.post('/register', { fetch_event_types: ['user_settings'] });
    const fontSize = registered.body.user_settings?.web_font_size_px;
    const fontSizes = Model.possible(model.fontSizes, 16);
    if (!fontSizes.includes(fontSize)) problems.push(`font size ${fontSize} is none of ${fontSizes.join(', ')}`);
    // What is there now is what the next round builds on.
    model.colors.push({ value: color, round, acked: true });
    model.fontSizes.push({ value: fontSize, round, acked: true });

    const roundAcked = [...model.messages.values()].filter((w) => w.round === round && w.acked).length;
    const roundSent = [...model.messages.values()].filter((w) => w.round === round).length;
    report.push(`round ${round}: messages ${roundAcked} acknowledged of ${roundSent} sent, ${thisRound.length} found; ` +
      `all rounds: ${acked} acknowledged, ${found} found (${unackedFound} unacknowledged but whole); drafts ${draftsAcked} acknowledged, ${draftsByToken.size} found; ` +
      `${model.seen.size} messages seen by the reader; verify and restart ${Math.round(startedAt - killedAt)} ms, checks ${Math.round(performance.now() - startedAt)} ms`);
    t.same(problems, [], `round ${round}: every acknowledged write is there and nothing is half there`);
    t.same(model.failures, [], `round ${round}: no write was refused`);
    t.ok(roundAcked > 0, `round ${round}: some writes were acknowledged before the kill`);
  }
  t.comment(report.join('\n'));
  server.process.kill('SIGKILL');
  await server.exited;
});

t.test('a read never shows a change before it is durable', async (t) => {
  // Regression: GET answered from memory while the group commit holding a send was still in flight, so a
  // reader could be shown a message that a crash then took (20 of 20 reads here, before the fix).
  const server = await startTestServer(t, { waitForFlush: true, rateLimit: null });
  await server.api.post('/users/me/subscriptions', { subscriptions: [{ name: 'durable reads' }] });
  const request = (method: string, path: string, query: string, body = '') => Promise.resolve(server.server.dispatch({
    method, path: `/api/v1${path}`, query, host: '127.0.0.1', body: Buffer.from(body), contentType: 'application/x-www-form-urlencoded',
    authorization: `Basic ${Buffer.from(`${server.owner.email}:${server.owner.key}`).toString('base64')}`,
  }));
  let early = 0;
  for (let i = 0; i < 20; i++) {
    let acknowledged = false;
    const sent = request('POST', '/messages', '', `type=stream&to=durable%20reads&topic=t&content=early${i}`).then((response) => {
      acknowledged = true;
      return response;
    });
    while (!acknowledged) {
      const read = await request('GET', '/messages', 'anchor=newest&num_before=1&num_after=0&apply_markdown=false');
      // GET /messages answers with bytes written into its writer (src/http/envelope.ts, EncodedFields), other
      // answers as text.
      const text = read.written ? Buffer.from(read.written.write()).toString('utf8') : read.body;
      const shown = !acknowledged && JSON.parse(text).messages?.[0]?.content === `early${i}`;
      // The send's answer follows its commit within microtasks: one macrotask later it is acknowledged,
      // unless the read answered before the commit was durable.
      await new Promise((resolve) => setImmediate(resolve));
      if (shown && !acknowledged) early++;
    }
    t.equal((await sent).status, 200);
  }
  t.equal(early, 0, 'no read showed a message before its send was acknowledged');
});
