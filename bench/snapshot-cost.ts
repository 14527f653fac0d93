/**
 * The periodic snapshot's cost per log entry it covers, without HTTP: the server's own Store and Runtime in
 * this process (as bench/lib/organization.ts opens them), `--entries` sends to a 10-subscriber channel (16
 * in flight, as the bench's connections), then one `runtime.snapshot()`, `--rounds` times. Reports the
 * snapshot's CPU per entry: the main thread's (the event loop) and every thread's (the commit on libuv's
 * pool, V8's helpers), from /proc's schedstat, and the longest the event loop was held at once meanwhile
 * (Node's event loop delay at a 1 ms resolution, as bench/search.ts reads it: what a request arriving then waited).
 *
 *   npx tsx bench/snapshot-cost.ts [--entries 50000] [--rounds 3] [--retention-ms N]   (default: the server's log archive retention)
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { MESSAGE_TEXT } from './messages.ts';
import { writeOrganization } from './lib/organization.ts';
import { allThreadsRunNs, mainThreadRunNs, makeTempDir, removeTempDir } from './lib/proc.ts';

const IN_FLIGHT = 16;

const { values } = parseArgs({ options: { entries: { type: 'string', default: '50000' }, rounds: { type: 'string', default: '3' }, 'retention-ms': { type: 'string' } } });
const entries = Number(values.entries);
const rounds = Number(values.rounds);

const dir = makeTempDir('snapshot-cost-');
try {
  const { runtime, store, realm, userIds, channelId } = await writeOrganization(dir, {
    users: 10, name: 'bench', channel: 'bench small', ...(values['retention-ms'] === undefined ? {} : { archiveRetentionMs: Number(values['retention-ms']) }),
  });
  await runtime.snapshot();
  let sent = 0;
  const send = async () => {
    while (sent < entries) {
      sent++;
      await runtime.execute(realm.realmId, {
        type: 'message.send', caller: { kind: 'user', userId: userIds[0]! }, kind: 'channel', to: channelId, topic: `topic ${sent % 100}`, content: MESSAGE_TEXT, client: 'bench',
      });
    }
  };
  for (let round = 1; round <= rounds; round++) {
    sent = 0;
    const sendStart = [mainThreadRunNs(process.pid), allThreadsRunNs(process.pid)] as const;
    await Promise.all(Array.from({ length: IN_FLIGHT }, send));
    const start = [mainThreadRunNs(process.pid), allThreadsRunNs(process.pid), performance.now()] as const;
    const covered = runtime.logPosition - store.snapshotSeq();
    const held = monitorEventLoopDelay({ resolution: 1 });
    held.enable();
    await runtime.snapshot();
    held.disable();
    const heldMs = held.max / 1e6;
    const main = (mainThreadRunNs(process.pid) - start[0]) / 1000 / covered;
    const all = (allThreadsRunNs(process.pid) - start[1]) / 1000 / covered;
    const sendAll = (start[1] - sendStart[1]) / 1000 / entries;
    const sendMain = (start[0] - sendStart[0]) / 1000 / entries;
    console.log(
      `round ${round}: snapshot of ${covered} entries in ${(performance.now() - start[2]).toFixed(0)} ms; ` +
        `${all.toFixed(2)} us CPU per entry (main thread ${main.toFixed(2)}), the event loop held at most ${heldMs.toFixed(0)} ms at once; the sends ${sendAll.toFixed(1)} us each (main thread ${sendMain.toFixed(1)})`,
    );
  }
  await store.close();
} finally {
  removeTempDir(dir);
}
