import { chmodSync, closeSync, fstatSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { flockSync } from 'fs-ext';

/** Written for operators (which process to stop); the lock is the directory's flock, never this file. */
const PID_FILE = 'server.pid';

/**
 * One process at a time owns a data directory: the server keeps its actors in memory, so a second
 * server, or an operator command writing behind its back, would diverge from it.
 *
 * The claim is an exclusive flock(2) on the directory itself, taken without waiting. The kernel drops it
 * when the last descriptor of the open file is closed, which happens as the process dies (before it is a
 * zombie waiting to be reaped), so a crash never leaves a claim behind, a reused pid means nothing, and two
 * processes racing for the directory cannot both get it. Node opens files close-on-exec: a child process
 * does not inherit the descriptor and cannot outlive its parent holding the lock. The directory rather than
 * a file in it is locked: there is no lock file for anyone to delete while the owner runs.
 */
export function claimDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const fd = openSync(dataDir, 'r');
  try {
    flockSync(fd, 'exnb');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EAGAIN' && code !== 'EWOULDBLOCK') {
      closeSync(fd);
      throw error;
    }
    const owner = lockHolder(fd) ?? recordedOwner(join(dataDir, PID_FILE));
    closeSync(fd);
    throw new Error(`the data directory ${dataDir} is in use by ${owner === null ? 'another process' : `process ${owner}`}; stop it first`);
  }
  // The directory holds password hashes, API keys and every message: its owner's alone, also where an older
  // server made it (and its files) readable by everyone.
  chmodSync(dataDir, 0o700);
  const pidFile = join(dataDir, PID_FILE);
  writeFileSync(pidFile, `${process.pid}\n`);
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    rmSync(pidFile, { force: true });
    closeSync(fd);
  };
}

/**
 * The pid the kernel lists as holding the directory's flock (Linux's /proc/locks), so the refusal names
 * the owner even before it has written server.pid, or after someone deleted it. Null elsewhere, or where
 * the holder's pid is not visible from this process's pid namespace (listed as 0).
 */
function lockHolder(fd: number): number | null {
  let table: string;
  try {
    table = readFileSync('/proc/locks', 'utf8');
  } catch {
    return null;
  }
  const { dev, ino } = fstatSync(fd, { bigint: true });
  // st_dev as glibc's major()/minor() split it; /proc/locks prints them in hex and the inode in decimal.
  const major = ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn);
  const minor = (dev & 0xffn) | ((dev >> 12n) & ~0xffn);
  const device = `${major.toString(16).padStart(2, '0')}:${minor.toString(16).padStart(2, '0')}:${ino}`;
  for (const line of table.split('\n')) {
    // "1: FLOCK  ADVISORY  WRITE 20887 fe:00:2212060 0 EOF"; blocked waiters are listed with "->" and skipped.
    const fields = line.trim().split(/\s+/);
    if (fields[1] !== 'FLOCK' || fields[3] !== 'WRITE' || fields[5] !== device) continue;
    const pid = Number(fields[4]);
    if (Number.isInteger(pid) && pid > 0) return pid;
  }
  return null;
}

/** The pid the owner wrote; null while it has not written it yet (it writes it right after locking). */
function recordedOwner(file: string): number | null {
  try {
    const pid = Number(readFileSync(file, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}
