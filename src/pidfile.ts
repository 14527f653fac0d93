import { readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * One process at a time owns a data directory: the server keeps its actors in memory, so a second
 * server, or an operator command writing behind its back, would diverge from it.
 */
export function claimDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, 'server.pid');
  const owner = runningOwner(file);
  if (owner !== null) {
    throw new Error(`the data directory ${dataDir} is in use by process ${owner}; stop it first`);
  }
  writeFileSync(file, String(process.pid));
  return () => {
    if (runningOwner(file) === process.pid) rmSync(file, { force: true });
  };
}

function runningOwner(file: string): number | null {
  let pid: number;
  try {
    pid = Number(readFileSync(file, 'utf8').trim());
  } catch {
    return null;
  }
  if (!Number.isInteger(pid) || pid <= 0) return null;
  if (pid === process.pid) return pid;
  try {
    process.kill(pid, 0);
    return pid;
  } catch {
    return null;
  }
}
