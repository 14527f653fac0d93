import { copyFile, mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** The folders beside LMDB that hold an organization's files (uploads.ts, emoji-images.ts). */
export const FILE_FOLDERS = ['uploads', 'avatars', 'emoji'] as const;

interface Copied {
  size: number;
  mtimeMs: number;
}

/** Every file below `dir`, as paths relative to it (none if it is not there). */
export async function filesBelow(dir: string, prefix = ''): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(join(dir, prefix), { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const found: string[] = [];
  for (const entry of entries) {
    const path = join(prefix, entry.name);
    if (entry.isDirectory()) found.push(...(await filesBelow(dir, path)));
    else if (entry.isFile()) found.push(path);
  }
  return found;
}

/**
 * Copies the files of FILE_FOLDERS from `from` to `to`; with `copied`, only those not copied yet or changed
 * since (size or modification time), and records what it copied there. Returns how many files it copied.
 */
async function copyFolders(from: string, to: string, copied: Map<string, Copied> | null = null): Promise<number> {
  let count = 0;
  for (const folder of FILE_FOLDERS) {
    for (const path of await filesBelow(join(from, folder))) {
      const relative = join(folder, path);
      let before;
      try {
        before = await stat(join(from, relative));
      } catch (error) {
        // Removed meanwhile: whatever named it was removed first.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw error;
      }
      const known = copied?.get(relative);
      if (known && known.size === before.size && known.mtimeMs === before.mtimeMs) continue;
      await mkdir(dirname(join(to, relative)), { recursive: true });
      try {
        await copyFile(join(from, relative), join(to, relative));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw error;
      }
      copied?.set(relative, { size: before.size, mtimeMs: before.mtimeMs });
      count++;
    }
  }
  return count;
}

/**
 * A backup's files, copied consistently with its LMDB copy (`copyData`) while a server writes. Files are
 * written whole and durably before any record names them, and never changed after (uploads.ts); some are
 * removed (a deleted attachment, after its record). So: every file there is copied before the LMDB copy (a
 * file whose record is removed before that copy is in the backup anyway, unnamed and harmless), then
 * those that appeared or grew since (a file named by the copy was whole before its record was committed).
 * A file written after the first pass and removed again before the second, all while the LMDB copy was
 * taken, is the one that can be missing; restore reports a file the records name and the backup lacks.
 */
export async function backupFiles(dataDir: string, out: string, copyData: () => Promise<void>): Promise<{ files: number; bytes: number }> {
  const copied = new Map<string, Copied>();
  await copyFolders(dataDir, out, copied);
  await copyData();
  await copyFolders(dataDir, out, copied);
  return { files: copied.size, bytes: [...copied.values()].reduce((sum, { size }) => sum + size, 0) };
}

/** Copies a backup's files into a data directory being restored (the staging directory). */
export function restoreFiles(backup: string, dataDir: string): Promise<number> {
  return copyFolders(backup, dataDir);
}

/**
 * Moves the restored files in place of the data directory's: its folders go, the staged ones take their
 * place (called once the restored data has loaded and verified).
 */
export async function replaceFiles(staging: string, dataDir: string): Promise<void> {
  for (const folder of FILE_FOLDERS) {
    const old = join(staging, `replaced-${folder}`);
    await rm(old, { recursive: true, force: true });
    await rename(join(dataDir, folder), old).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
    await rename(join(staging, folder), join(dataDir, folder)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
  }
}
