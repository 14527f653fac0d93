import t from 'tap';
import { childServers } from './helpers/child.ts';
import { cli } from './helpers/cli.ts';
import { tempDir, type ApiClient } from './helpers/server.ts';

// Servers start as processes of their own (tsx, about a second of CPU each): minutes on a loaded machine.
t.setTimeout(600_000);

/**
 * Log appends that come while a commit is in flight wait for it and share the next one (CHAT_COMMIT_DELAY_MS,
 * snapshots/commit-delay.ts); LMDB commits with lmdb-js's overlapping flush or, asked to, in its classic mode
 * (CHAT_LMDB_CLASSIC_COMMIT). Concurrent sends are SIGKILLed mid-flood, in each mode and across a switch either
 * way: after the reboot every acknowledged message is there, with its content.
 */

const WRITERS = 16;
/** acknowledged sends a round waits for before the kill, so that many commits of many sends each come first */
const ACKED_PER_ROUND = 300;
const CLASSIC = { CHAT_LMDB_CLASSIC_COMMIT: 'true' };

interface Sent {
  acked: Map<number, string>;
  failures: string[];
}

/** Sends from WRITERS clients at once, each a message after the other, until `stop`. */
function flood(api: ApiClient, streamId: number, round: number, sent: Sent) {
  let stopped = false;
  let counter = 0;
  const writer = async () => {
    while (!stopped) {
      const content = `round ${round} message ${counter++}`;
      try {
        const answer = await api.post('/messages', { type: 'stream', to: String(streamId), topic: `r${round}`, content });
        if (answer.status === 200) sent.acked.set(answer.body.id, content);
        else sent.failures.push(`${content}: HTTP ${answer.status} ${JSON.stringify(answer.body)}`);
      } catch {
        // the connection died with the server: not acknowledged
      }
    }
  };
  const done = Promise.all(Array.from({ length: WRITERS }, writer));
  return { stop: () => (stopped = true), done };
}

async function channelMessages(api: ApiClient, streamId: number): Promise<Map<number, string>> {
  const result = await api.get('/messages', { anchor: 'newest', num_before: 5000, num_after: 0, apply_markdown: false, narrow: [{ operator: 'channel', operand: streamId }] });
  if (result.status !== 200) throw new Error(`fetch failed: ${JSON.stringify(result.body)}`);
  return new Map(result.body.messages.map((message: { id: number; content: string }) => [message.id, message.content]));
}

async function verify(dataDir: string): Promise<{ code: number; output: string }> {
  const { code, stdout, stderr } = await cli('verify', '--data-dir', dataDir);
  return { code, output: stdout + stderr };
}

t.test('concurrent sends acknowledged before a SIGKILL survive it, in either commit mode and across a switch', async (t) => {
  const dataDir = tempDir();
  const servers = childServers(t, [dataDir]);
  // Each round writes in one mode and boots in another: overlapping -> classic, classic -> classic,
  // classic -> overlapping, overlapping -> overlapping.
  // Snapshots every 50 ms in the later rounds: some land while sends wait for a commit.
  const rounds: { writes: Record<string, string>; boots: Record<string, string>; name: string }[] = [
    { writes: {}, boots: CLASSIC, name: 'overlapping flush, rebooted in the classic commit' },
    { writes: { ...CLASSIC, CHAT_SNAPSHOT_SECONDS: '0.05' }, boots: CLASSIC, name: 'classic commit, rebooted in the same' },
    { writes: { ...CLASSIC, CHAT_SNAPSHOT_SECONDS: '0.05' }, boots: {}, name: 'classic commit, rebooted in the overlapping flush' },
    { writes: { CHAT_SNAPSHOT_SECONDS: '0.05' }, boots: {}, name: 'overlapping flush, rebooted in the same' },
  ];
  let server = await servers.start(dataDir, rounds[0]!.writes);
  t.equal((await server.api.post('/users/me/subscriptions', { subscriptions: [{ name: 'flood' }] })).status, 200, 'the channel is created');
  const streamId: number = (await server.api.get('/get_stream_id', { stream: 'flood' })).body.stream_id;
  const sent: Sent = { acked: new Map(), failures: [] };

  for (const [round, { writes, boots, name }] of rounds.entries()) {
    if (round > 0) {
      server.process.kill('SIGTERM');
      t.equal(await server.exited, 0, `round ${round}: the server stops cleanly`);
      server = await servers.start(dataDir, writes);
    }
    const before = sent.acked.size;
    const load = flood(server.api, streamId, round, sent);
    while (sent.failures.length === 0 && sent.acked.size - before < ACKED_PER_ROUND) await new Promise((resolve) => setTimeout(resolve, 5));
    // Killed with all the writers' sends in flight: some decided, some waiting for a commit, some committing.
    server.process.kill('SIGKILL');
    load.stop();
    t.equal(await server.exited, 'SIGKILL', `round ${round}: killed mid-flood`);
    await load.done;
    t.same(sent.failures, [], `round ${round}: every send answered before the kill was acknowledged`);

    server = await servers.start(dataDir, boots);
    const stored = await channelMessages(server.api, streamId);
    const lost = [...sent.acked].filter(([id, content]) => stored.get(id) !== content);
    t.same(lost.slice(0, 5), [], `${name}: every acknowledged message is there with its content (${sent.acked.size} so far)`);
    t.equal(new Set(stored.values()).size, stored.size, `${name}: no message is stored twice`);
  }
  server.process.kill('SIGTERM');
  t.equal(await server.exited, 0, 'the last server stops cleanly');
  const checked = await verify(dataDir);
  t.equal(checked.code, 0, `verify accepts the directory: ${checked.output.slice(-500)}`);
});
