import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Test } from 'tap';
import { backup, openWriter, randomPoint, roundTrip } from '../../bench/lib/backup-round-trip.ts';
import { tempDir } from './server.ts';

/**
 * Backup -> restore -> verify -> start -> compare, with `pending` log records (after the periodic snapshot)
 * in the backup: the restored server starts and serves what was written (message count, newest message, a
 * random sample read back, users, every file by checksum), and so does one restored up to a random point
 * with --log. bench/backup.ts does the same with 100,000 pending records and with 1,000,000 messages.
 */
export async function backupRoundTrips(t: Test, pending: number): Promise<void> {
  const dataDir = tempDir();
  const work = tempDir();
  t.teardown(() => {
    for (const dir of [dataDir, work]) rmSync(dir, { recursive: true, force: true });
  });
  const writer = await openWriter(dataDir);
  let open = true;
  t.teardown(async () => {
    if (open) await writer.close();
  });
  await writer.write({ base: 1_000, pending, files: 6 });
  // Taken while the writer holds the directory open, as a running server does.
  const copy = join(work, 'backup');
  const taken = await backup(dataDir, copy);
  t.equal(taken.seq, writer.history.lastSeq, 'the backup holds every record written');
  t.equal(taken.seq - writer.history.snapshotSeq, pending + 3, `${pending} messages and 3 files pending after the periodic snapshot`);
  await writer.more(500);
  await writer.close();
  open = false;

  const plain = await roundTrip(writer.history, copy, taken.seq, join(work, 'restored'));
  t.same(plain.differences, [], 'the restored server serves what the backup holds');
  t.equal(plain.messages, 1_000 + pending);
  const point = randomPoint(writer.history);
  const until = await roundTrip(writer.history, copy, taken.seq, join(work, 'until'), { seq: point, logDir: dataDir });
  t.same(until.differences, [], `restored up to position ${point}, it serves what was written up to it`);
}
