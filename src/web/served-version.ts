import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { webClientVersion } from './build.ts';

/** The web client version the data directory's server last served, beside its data. */
export const WEB_CLIENT_VERSION_FILE = 'web-client-version';

/**
 * Records the web client version this start serves; `changed`: a server on this directory served another
 * one before (a first start has served none, and nobody has a page to reload).
 */
export async function servedWebClient(dataDir: string): Promise<{ version: string; changed: boolean }> {
  const path = join(dataDir, WEB_CLIENT_VERSION_FILE);
  const version = await webClientVersion();
  const previous = await readFile(path, 'utf8').then((text) => text.trim(), () => null);
  if (previous !== version) await writeFile(path, `${version}\n`);
  return { version, changed: previous !== null && previous !== version };
}
