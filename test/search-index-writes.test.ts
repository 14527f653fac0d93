import { rmSync } from 'node:fs';
import t from 'tap';
import { parseSearch } from '../actors/realm/messages/search-query.ts';
import { SqliteSearchIndex } from '../snapshots/search-index.ts';
import { tempDir } from './helpers/server.ts';

/**
 * A sent message's row is written with a plain INSERT (the index never holds it before); one there all the
 * same is replaced, and the rest of the batch goes on: in the worker that serves, and at boot (`write`).
 */
t.test('a put over a row the index already holds replaces it, in the worker and at boot', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const find = async (index: SqliteSearchIndex, word: string) => index.search(1, parseSearch(word).query, 'before', 1000, 100);

  const booting = new SqliteSearchIndex(dir);
  booting.write(2, [
    { kind: 'put', realmId: 1, id: 1, content: 'apple', topic: 'fruit' },
    { kind: 'put', realmId: 1, id: 2, content: 'banana', topic: 'fruit' },
  ]);
  booting.write(4, [
    { kind: 'put', realmId: 1, id: 1, content: 'cherry', topic: 'fruit' },
    { kind: 'put', realmId: 1, id: 3, content: 'damson', topic: 'fruit' },
  ]);
  t.same(await find(booting, 'apple'), [], 'at boot: the old text is gone');
  t.same(await find(booting, 'cherry'), [1], 'the new one is found');
  t.same(await find(booting, 'damson'), [3], 'and the batch went on');
  t.equal(booting.position(), 4);

  booting.post(6, [
    { kind: 'put', realmId: 1, id: 4, content: 'elder', topic: 'fruit' },
    { kind: 'put', realmId: 1, id: 2, content: 'fig', topic: 'fruit' },
    { kind: 'put', realmId: 1, id: 5, content: 'grape', topic: 'fruit' },
  ]);
  t.same(await find(booting, 'banana'), [], 'in the worker: the old text is gone');
  t.same(await find(booting, 'fig'), [2], 'the new one is found');
  t.same(await find(booting, 'elder grape'), [], 'one message holds neither');
  t.same([...(await find(booting, 'elder')), ...(await find(booting, 'grape'))], [4, 5], 'and the batch went on');
  t.equal(booting.writeFailure, null, 'the worker still takes writes');
  t.equal(booting.position(), 6);
  await booting.close();
});
