import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { tempDir } from './helpers/server.ts';

/**
 * lmdb-js 3.5 cannot commit a first transaction that frees hundreds of pages in a compacted copy (its
 * free-page database is empty): see Store.sealFreeList. Each case runs in a child process, since LMDB may
 * abort it.
 */
const SCRIPT = fileURLToPath(new URL('./helpers/compacted-copy.ts', import.meta.url));

function run(mode: 'lmdb' | 'store'): Promise<{ code: number | string; output: string }> {
  const dir = tempDir();
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', SCRIPT, mode, dir], (error, stdout, stderr) => {
      rmSync(dir, { recursive: true, force: true });
      resolve({ code: error ? (error.code ?? error.signal ?? 1) : 0, output: stdout + stderr });
    });
  });
}

t.test('lmdb-js alone: the first big removal in a compacted copy fails in mdb_page_alloc', async (t) => {
  const { code, output } = await run('lmdb');
  // If this stops failing, lmdb-js fixed mdb_page_alloc: Store.sealFreeList can go.
  t.not(code, 0, 'the reproduction still reproduces');
  t.match(output, /mdb_page_alloc|MDB_BAD_VALSIZE|MDB_BAD_TXN|Commit failed/, 'LMDB reports it');
  t.notMatch(output, /removed 6000/);
});

t.test('opened as a Store, the same copy takes the trim of all its log in one snapshot', async (t) => {
  const { code, output } = await run('store');
  t.equal(code, 0, `the child ends well${code === 0 ? '' : `:\n${output}`}`);
  t.match(output, /removed 6000/);
});
