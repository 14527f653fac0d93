/**
 * Run as a child process by test/lmdb-compacted-copy.test.ts (it may abort in LMDB's C code):
 * `node --import tsx compacted-copy.ts MODE DIR`. Writes a few thousand entries in a named database, takes
 * a compacted copy (as `chat-server snapshot` did), opens the copy and removes every entry in its first
 * write transaction. MODE 'lmdb' opens the copy with lmdb-js alone (the Store's options) and removes them;
 * MODE 'store' opens it as a Store, as the server's boot and restore do, and trims them in one snapshot, as
 * the boot does. Prints 'removed N' when the removal commits.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { open, type RootDatabase } from 'lmdb';
import { Store } from '../../snapshots/store.ts';

/** Enough entries that the pages their removal frees are listed in more than a leaf node holds (about 250 pages). */
const ENTRIES = 6_000;
const VALUE_BYTES = 200;

const [mode, dir] = process.argv.slice(2);
if ((mode !== 'lmdb' && mode !== 'store') || !dir) throw new Error('usage: compacted-copy.ts lmdb|store DIR');

const openRoot = (path: string) => open({ path, noSubdir: false, encoding: 'binary', compression: false, separateFlushed: true } as Parameters<typeof open>[0]) as RootDatabase<Buffer, number>;

// The Store's databases exist in the source, as in any server's data directory (a Store opened on a copy
// that lacks one creates it: a small write of its own first).
await new Store(join(dir, 'source'), { waitForFlush: true }).close();
const source = openRoot(join(dir, 'source'));
const sourceLog = source.openDB<Buffer, number>({ name: 'log', encoding: 'binary' });
source.openDB<Buffer, string>({ name: 'meta', encoding: 'binary' });
await source.transaction(() => {
  for (let seq = 1; seq <= ENTRIES; seq++) sourceLog.put(seq, Buffer.alloc(VALUE_BYTES, seq & 0xff));
});
const copy = join(dir, 'copy');
mkdirSync(copy);
await source.backup(copy, true);
await source.close();

if (mode === 'store') {
  // The Store's log database is the one named 'log': the same entries, trimmed as a boot's first snapshot
  // does (with no log archive kept, CHAT_LOG_ARCHIVE_RETENTION=0, the trim only removes).
  const store = new Store(copy, { waitForFlush: true, archiveRetentionMs: 0 });
  await store.writeSnapshots(ENTRIES, [], []);
  console.log(`removed ${ENTRIES - store.logCount()}`);
  await store.close();
} else {
  const root = openRoot(copy);
  const log = root.openDB<Buffer, number>({ name: 'log', encoding: 'binary' });
  await root.transaction(() => {
    for (const key of log.getKeys({})) log.remove(key);
  });
  console.log(`removed ${ENTRIES - log.getCount()}`);
  await root.close();
}
