import { open, type FileHandle } from 'node:fs/promises';
import type { BodyStream } from './request.ts';

/**
 * How much of a file is read at a time: one buffer of it per download in progress. Large enough that a
 * download costs few reads, small beside the socket buffers it fills.
 */
const PIECE_BYTES = 256 * 1024;

/**
 * A file on disk as a response body read a piece at a time into one buffer, or null where there is no such
 * file. Its size is that of the file opened, so a file replaced meanwhile is still sent whole and as told.
 */
export async function fileBody(path: string): Promise<BodyStream | null> {
  const handle = await open(path, 'r').catch(() => null);
  if (!handle) return null;
  try {
    const { size } = await handle.stat();
    return { pieces: pieces(handle, Math.min(size, PIECE_BYTES)), size };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

async function* pieces(handle: FileHandle, bytes: number): AsyncGenerator<Buffer, undefined> {
  try {
    const buffer = Buffer.allocUnsafe(bytes);
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, bytes, null);
      if (bytesRead === 0) return undefined;
      yield buffer.subarray(0, bytesRead);
    }
  } finally {
    await handle.close();
  }
}
