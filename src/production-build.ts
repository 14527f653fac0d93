/**
 * Compiles the server ahead of time for `npm start` and `npm run cli`: src/main.ts and everything it imports,
 * bundled by esbuild into one ES module, `.build/main.js`, that plain `node` runs (no tsx at run time).
 *
 *   tsx src/production-build.ts              compile (npm ci runs this as the `prepare` step)
 *   tsx src/production-build.ts --if-stale   compile only when .build/ is missing or older than a source
 *                                            (`prestart`, `precli`: an edited source is never run stale)
 *
 * Without esbuild's keepNames (tsx compiles with it): it wraps every named function and class in a call
 * that sets its `name`, which makes each closure a hot path creates cost an extra call.
 */
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { Plugin } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Where `npm start` runs the server from: a git-ignored dot-directory at the top of the repository. */
export const BUILD_DIR = join(ROOT, '.build');

/** The bundle's file name inside a build directory. */
export const ENTRY_FILE = 'main.js';

/** Written last: lists the build's inputs and when it started, so a later edit shows the build is stale. */
const STAMP_FILE = 'inputs.json';

/** Read by the build without being imported: a change to one changes the output. */
const CONFIG_INPUTS = ['package.json', 'tsconfig.json', 'src/production-build.ts'];

interface Stamp {
  startedAtMs: number;
  /** relative to the repository root */
  inputs: string[];
}

/** Bundles `entry` (relative to the repository root) into `outFile` for Node 20; packages stay imports. */
export async function bundleForNode(entry: string, outFile: string): Promise<string[]> {
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: [entry],
    outfile: outFile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // node_modules are resolved at run time from the repository, native addons (lmdb, uWS) included.
    packages: 'external',
    sourcemap: 'linked',
    metafile: true,
    write: false,
    logLevel: 'silent',
    plugins: [sourceLocations(dirname(outFile))],
  });
  mkdirSync(dirname(outFile), { recursive: true });
  for (const file of result.outputFiles) {
    if (file.path === outFile) writeAtomically(file.path, withPlainNodeHashbang(file.text), 0o755);
    else writeAtomically(file.path, file.text);
  }
  return Object.keys(result.metafile.inputs);
}

/**
 * Compiles the server into `outDir`. Each file is written under a temporary name and renamed, so two
 * concurrent builds (two `npm start`s) never leave a half-written bundle.
 */
export async function buildServer(outDir: string = BUILD_DIR): Promise<void> {
  const startedAtMs = Date.now();
  const inputs = await bundleForNode('src/main.ts', join(outDir, ENTRY_FILE));
  const stamp: Stamp = { startedAtMs, inputs: [...CONFIG_INPUTS, ...inputs] };
  writeAtomically(join(outDir, STAMP_FILE), JSON.stringify(stamp));
}

/** Why `outDir` must be rebuilt before it runs, or null when it is current. */
export function staleReason(outDir: string = BUILD_DIR): string | null {
  let stamp: Stamp;
  try {
    stamp = JSON.parse(readFileSync(join(outDir, STAMP_FILE), 'utf8')) as Stamp;
    statSync(join(outDir, ENTRY_FILE));
  } catch {
    return `${outDir} holds no complete build`;
  }
  for (const input of stamp.inputs) {
    let modifiedMs: number;
    try {
      modifiedMs = statSync(join(ROOT, input)).mtimeMs;
    } catch {
      return `${input} is gone`;
    }
    // Equal counts as stale: a file saved in the very millisecond the build began may not be in it.
    if (modifiedMs >= stamp.startedAtMs) return `${input} changed`;
  }
  return null;
}

/** Rebuilds `outDir` when it is stale; says why it did, or returns null when it had nothing to do. */
export async function ensureBuilt(outDir: string = BUILD_DIR): Promise<string | null> {
  const reason = staleReason(outDir);
  if (reason === null) return null;
  await buildServer(outDir);
  return reason;
}

/**
 * A bundle has one `import.meta.url`, the bundle's own, where the sources each had theirs: src/config.ts
 * finds the repository's data folder from it, src/web/build.ts the web client's sources. This gives every
 * module its source file's URL again, relative to the bundle so the repository may move. Any other
 * `import.meta` property stops the build rather than silently pointing somewhere else.
 */
function sourceLocations(outDir: string): Plugin {
  return {
    name: 'source-locations',
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, (args) => {
        const source = readFileSync(args.path, 'utf8');
        const fromBundle = relative(outDir, args.path).split(sep).join('/');
        const unsupported: string[] = [];
        const contents = source.replace(/\bimport\.meta\.(\w+)/g, (whole, property: string) => {
          if (property === 'url') return `new URL(${JSON.stringify(fromBundle)}, import.meta.url).href`;
          unsupported.push(whole);
          return whole;
        });
        if (unsupported.length > 0) {
          return { errors: [{ text: `${unsupported.join(', ')} is not supported in compiled code: use import.meta.url` }] };
        }
        return { contents, loader: 'ts' };
      });
    },
  };
}

/** The entry's `#!/usr/bin/env -S node --import tsx` would load tsx again. */
function withPlainNodeHashbang(text: string): string {
  return text.startsWith('#!') ? `#!/usr/bin/env node${text.slice(text.indexOf('\n'))}` : text;
}

function writeAtomically(file: string, text: string, mode = 0o644): void {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, text, { mode });
  renameSync(temporary, file);
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { 'if-stale': { type: 'boolean' } } });
  const target = relative(ROOT, join(BUILD_DIR, ENTRY_FILE));
  if (values['if-stale']) {
    const reason = await ensureBuilt();
    if (reason !== null) console.error(`Compiled ${target} (${reason}).`);
    return;
  }
  await buildServer();
  console.error(`Compiled ${target}.`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(`Could not compile the server into ${relative(ROOT, BUILD_DIR)}/: ${error instanceof Error ? error.message : String(error)}`);
    console.error('Fix the error, then run `npm run build` (or `npm start`, which compiles first when a source changed).');
    process.exit(1);
  });
}
