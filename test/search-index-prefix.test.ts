import { rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { parseSearch } from '../actors/realm/messages/search-query.ts';
import type { IndexOp } from '../snapshots/index-ops.ts';
import { SEARCH_INDEX_FILE, SqliteSearchIndex } from '../snapshots/search-index.ts';
import { tempDir } from './helpers/server.ts';

/** Written as serving writes them (batches of this many): FTS5's segments merge as they grow. */
const BATCH = 100;
/** Past about 26,000 such messages an incremental merge has consumed the start of a segment (checked below). */
const MESSAGES = 30_000;
const REALM_ROWS = 2 ** 32;

t.test('prefixes read from the index segments find what FTS5 finds, through merges', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const index = new SqliteSearchIndex(dir, { prefixTerms: 1000 });
  t.teardown(() => index.close());
  // FTS5 reading the same prefixes itself, on a connection of its own.
  const db = new Database(join(dir, SEARCH_INDEX_FILE), { readonly: true });
  t.teardown(() => db.close());
  const native = db.prepare('SELECT rowid FROM messages WHERE messages MATCH ? AND rowid >= ? AND rowid < ? ORDER BY rowid DESC LIMIT 200').pluck();
  const trimmed = db.prepare('SELECT count(*) FROM messages_idx i WHERE NOT EXISTS (SELECT 1 FROM messages_data d WHERE d.id = i.segid * 137438953472 + (i.pgno >> 1))').pluck();
  const operands = ['comm', 'wor', 'fil', 'pag', '2712', '1999', 'zz', 'walk', 'common pag', 'word 1999'];
  let merging = 0;
  let id = 0;
  while (id < MESSAGES) {
    const ops: IndexOp[] = [];
    for (let i = 0; i < BATCH; i++) {
      id++;
      const extra = id % 97 === 0 ? ' walkers walked' : id % 89 === 0 ? ' walkthrough' : '';
      ops.push({ kind: 'put', realmId: 1, id, content: `common word ${id} and some more text to fill pages${extra}`, topic: 'bulk' });
    }
    if (id % 1000 === 0) ops.push({ kind: 'delete', realmId: 1, id: id - 500 });
    index.post(id, ops);
    if (id % 2000 !== 0) continue;
    const ids = await index.search(1, parseSearch('pag').query, 'before', id + 1, 1); // the writes are done
    t.equal(ids.length, 1);
    if (trimmed.get() !== 0) merging++;
    for (const operand of operands) {
      const query = parseSearch(operand).query;
      const expected = (native.all(query, BigInt(REALM_ROWS), BigInt(REALM_ROWS + id + 1)) as number[]).map((row) => row - REALM_ROWS);
      const found = await index.search(1, query, 'before', id + 1, 200);
      if (JSON.stringify(found) !== JSON.stringify(expected)) t.same(found, expected, `${operand} at ${id} messages`);
    }
  }
  t.ok(merging > 0, `a segment was part-consumed by a merge at ${merging} of the checks`);
});
