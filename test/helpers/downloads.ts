import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';

/** The largest resident set of a process since the last reset (Linux: VmHWM, reset by `resetPeakResident`). */
export const peakResident = (pid: number) => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;
export const resident = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;
/** Starts a new peak from the current resident set (clear_refs 5). */
export const resetPeakResident = (pid: number) => writeFileSync(`/proc/${pid}/clear_refs`, '5');

/** Downloads as a client does, a chunk at a time, keeping only the digest and the length. */
export async function digestOf(response: Response): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    hash.update(chunk);
    bytes += chunk.byteLength;
  }
  return { sha256: hash.digest('hex'), bytes };
}
