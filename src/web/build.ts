import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { basename, dirname, extname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One file of the built web client, held in memory. */
export interface WebAsset {
  contentType: string;
  /** text, or the bytes of a binary file (KaTeX's fonts) */
  body: string | Uint8Array;
  /** named by its content hash: cached for good (index.html is not) */
  immutable: boolean;
}

/** The built client: `/` (index.html) and `/static/<name>` for the bundle's files. */
export type WebAssets = ReadonlyMap<string, WebAsset>;

const CLIENT_DIR = join(dirname(fileURLToPath(import.meta.url)), 'client');

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.ttf': 'font/ttf',
};

const FONTS = new Set(['.woff2', '.woff', '.ttf']);

/**
 * Style sheets loaded only when needed, built as entry points of their own so that the main sheet does not
 * carry them: KaTeX's (with its fonts) once a message holds math. index.html names each in a meta tag.
 */
const LAZY_STYLES = { math: 'lazy/math.css' };

/**
 * Bundles the browser client (src/web/client) with esbuild, in memory. The server builds it on the first
 * request for the page, so `npm start` and the tests need no build step and can never serve a stale bundle;
 * nothing is written to disk, so concurrent test processes cannot race on a build folder. Takes ~100 ms.
 */
export async function buildWebClient(): Promise<WebAssets> {
  // Loaded here, not at the top: a server nobody opens the page of never starts esbuild's service.
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    absWorkingDir: CLIENT_DIR,
    entryPoints: ['main.ts', ...Object.values(LAZY_STYLES)],
    tsconfig: join(CLIENT_DIR, 'tsconfig.json'),
    bundle: true,
    format: 'esm',
    target: ['es2022', 'chrome110', 'firefox115', 'safari16'],
    minify: true,
    sourcemap: 'linked',
    // Hashed names let the bundle be cached forever; index.html, never cached, names the current ones.
    entryNames: '[name]-[hash]',
    // KaTeX and highlight.js are imported dynamically: chunks of their own, fetched when a message needs them.
    splitting: true,
    chunkNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    loader: { '.woff2': 'file', '.woff': 'file', '.ttf': 'file' },
    metafile: true,
    outdir: '/static',
    write: false,
    logLevel: 'silent',
  });
  const assets = new Map<string, WebAsset>();
  for (const file of result.outputFiles) {
    const name = basename(file.path);
    const extension = extname(name);
    const body = FONTS.has(extension) ? file.contents : file.text;
    assets.set(`/static/${name}`, { contentType: CONTENT_TYPES[extension] ?? 'application/octet-stream', body, immutable: true });
  }
  // The metafile names each entry point relative to absWorkingDir, and what it was built into.
  const built = (entry: string) => {
    const found = Object.entries(result.metafile.outputs).find(([path, output]) => output.entryPoint === entry && !path.endsWith('.map'));
    if (!found) throw new Error(`the web client's build has no output for ${entry}`);
    return { path: `/static/${basename(found[0])}`, style: found[1].cssBundle && `/static/${basename(found[1].cssBundle)}` };
  };
  const main = built('main.ts');
  const lazyStyles = Object.entries(LAZY_STYLES).map(([name, entry]) => `<meta name="style-${name}" content="${built(entry).path}">`).join('\n  ');
  const html = (await readFile(join(CLIENT_DIR, 'index.html'), 'utf8'))
    .replace('{{script}}', main.path)
    .replace('{{style}}', main.style ?? '')
    .replace('{{lazy-styles}}', lazyStyles);
  assets.set('/', { contentType: CONTENT_TYPES['.html']!, body: html, immutable: false });
  return assets;
}

/**
 * The web client's version: a hash of its sources, which the bundle is built from. The server compares it
 * with the one it served before a restart to tell kept queues' web clients to reload (`web_reload_client`).
 */
export async function webClientVersion(): Promise<string> {
  const hash = createHash('sha256');
  const files = (await readdir(CLIENT_DIR, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
  for (const file of files) hash.update(relative(CLIENT_DIR, file)).update('\0').update(await readFile(file)).update('\0');
  return hash.digest('hex').slice(0, 16);
}
