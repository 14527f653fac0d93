import { join } from 'node:path';
import { BUILD_DIR, ENTRY_FILE, ensureBuilt } from '../../src/production-build.ts';

/**
 * The tests' own copy of the compiled server, apart from the one `npm start` runs: production-build.test.ts
 * makes that one stale on purpose and checks that `npm start` is the one to rebuild it.
 */
const TEST_BUILD_DIR = join(BUILD_DIR, 'test');

let built: Promise<string> | null = null;

/**
 * The server compiled as `npm start` runs it (src/production-build.ts), rebuilt first when a source is newer,
 * checked once per test process. Tests that run the server or the command-line tool as a process of its
 * own run this with plain node: loading the sources through tsx took each such process three to four times
 * the CPU to start. Test files run in parallel may rebuild it at the same time: each writes whole files and
 * renames them into place, so none runs a half-written bundle.
 */
export function serverProgram(): Promise<string> {
  built ??= ensureBuilt(TEST_BUILD_DIR).then(() => join(TEST_BUILD_DIR, ENTRY_FILE));
  return built;
}
