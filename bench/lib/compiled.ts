import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BUILD_DIR, bundleForNode, ENTRY_FILE, ensureBuilt } from '../../src/production-build.ts';

/**
 * The bench measures what production runs: the server as `npm start` runs it (`.build/main.js`, compiled
 * ahead of time, plain node), and the raw uWS baselines and the heap probe compiled the same way, so that no
 * process it measures carries tsx's loader or the keepNames wrappers tsx adds to every named function.
 */
let serverBuilt: Promise<string> | null = null;
/** Inside the repository, where `node_modules` resolves for the bundles' package imports. */
const BENCH_BUILD_DIR = join(BUILD_DIR, 'bench');
const programs = new Map<string, Promise<string>>();

/** The production bundle, rebuilt first when a source is newer than it (as `npm start` does). */
export function serverProgram(): Promise<string> {
  serverBuilt ??= ensureBuilt().then((reason) => {
    if (reason !== null) console.log(`Compiled the server (${reason})`);
    return join(BUILD_DIR, ENTRY_FILE);
  });
  return serverBuilt;
}

/** A bench program (`bench/...ts`, from the repository root) compiled like the server, once per bench run. */
export function compiledProgram(source: string): Promise<string> {
  let program = programs.get(source);
  if (!program) {
    const outFile = join(BENCH_BUILD_DIR, source.replaceAll('/', '-').replace(/\.ts$/, '.js'));
    program = bundleForNode(source, outFile).then(() => outFile);
    programs.set(source, program);
  }
  return program;
}

/**
 * Node arguments that start the compiled server with ARGS and the heap probe preloaded (for `probeMemory`).
 * Await them before timing a start: a rebuild is not part of the server's boot.
 */
export async function measuredServerArgs(args: string[]): Promise<string[]> {
  const [server, probe] = await Promise.all([serverProgram(), compiledProgram('bench/lib/heap-probe.ts')]);
  return ['--expose-gc', '--import', pathToFileURL(probe).href, server, ...args];
}
