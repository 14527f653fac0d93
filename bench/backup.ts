/**
 * Backup round trips at sizes too large for the test suite (test/backup-scale*.test.ts runs 0, 2,000 and
 * 10,000 pending records):
 *
 *   npx tsx bench/backup.ts [--base 10000] [--pending 100000] [--files 20]
 *   npx tsx bench/backup.ts --base 900000 --pending 100000       a directory of 1,000,000 messages
 *
 * Writes a data directory with the server's own code in this process (bench/lib/backup-round-trip.ts: `base`
 * messages, the periodic snapshot, then `pending` messages left in the log, and files), takes a backup with
 * `chat-server snapshot` while it is open, sends 1,000 more, then restores the backup (plain, and --until a
 * random position with --log), verifies and starts a server on each, and compares what it serves with what
 * was written. Prints the time of each step; exits 1 if anything differs.
 */
import { rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { backup, openWriter, randomPoint, roundTrip, type RoundTrip } from './lib/backup-round-trip.ts';
import { makeTempDir } from './lib/proc.ts';

const { values } = parseArgs({
  options: { base: { type: 'string', default: '10000' }, pending: { type: 'string', default: '100000' }, files: { type: 'string', default: '20' } },
});
const base = Number(values.base);
const pending = Number(values.pending);
const files = Number(values.files);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

const dataDir = makeTempDir('chat-bench-backup-');
const work = makeTempDir('chat-bench-backup-out-');
let failed = false;
try {
  console.log(`Backup round trip: ${base} messages, the periodic snapshot, ${pending} more pending in the log, ${files} files (${dataDir})`);
  let began = performance.now();
  const writer = await openWriter(dataDir);
  await writer.write({ base, pending, files });
  console.log(`  written in ${seconds(performance.now() - began)}: log position ${writer.history.lastSeq}, snapshot at ${writer.history.snapshotSeq}`);
  const copy = join(work, 'backup');
  const taken = await backup(dataDir, copy);
  console.log(`  snapshot (the server's directory open): ${seconds(taken.ms)}, data.mdb ${Math.round(statSync(join(copy, 'data.mdb')).size / 2 ** 20)} MiB; ${taken.stdout.trim()}`);
  began = performance.now();
  await writer.more(1000);
  await writer.close();

  const report = (what: string, result: RoundTrip) => {
    console.log(`  ${what}: restore ${seconds(result.restoreMs)}, verify ${seconds(result.verifyMs)}, start ${seconds(result.startMs)} ` +
      `(spawn to listening); ${result.messages} messages, newest ${result.newest}: ${result.differences.length ? 'DIFFERS' : 'all served as written'}`);
    for (const difference of result.differences) console.log(`    ${difference.slice(0, 500)}`);
    failed ||= result.differences.length > 0;
  };
  report('restore', await roundTrip(writer.history, copy, taken.seq, join(work, 'restored')));
  rmSync(join(work, 'restored'), { recursive: true, force: true });
  const point = randomPoint(writer.history);
  report(`restore --until ${point} --log`, await roundTrip(writer.history, copy, taken.seq, join(work, 'until'), { seq: point, logDir: dataDir }));
} catch (error) {
  console.error(error);
  failed = true;
} finally {
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
