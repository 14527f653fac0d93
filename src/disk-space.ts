import { statfsSync } from 'node:fs';

/**
 * Free space on the data directory's disk, held against the configured minimum (CHAT_MIN_FREE_DISK).
 * LMDB grows its file as it writes, and lmdb-js 3.5.6 can abort the process on a write the disk refuses
 * (test/disk-errors.test.ts): below the minimum the server takes no writes, serves reads, and takes writes
 * again as soon as there is room. statfs is a cheap system call, but commits come by thousands a second,
 * so a reading serves for up to `maxAgeMs`.
 */
export class DiskSpace {
  private free: number | null = null;
  private readAt = -Infinity;
  private low = false;

  constructor(
    readonly dir: string,
    /** 0: no minimum. Public so that a test can move it above and below the real free space. */
    public minFreeBytes: number,
    /** told when writes stop or start again for lack of space */
    private readonly onChange: (low: boolean, freeBytes: number) => void = () => {},
    private readonly maxAgeMs = 1000,
  ) {}

  /** Bytes an unprivileged writer may still use there (statfs's bavail); null when it cannot be read. */
  freeBytes(): number | null {
    const now = performance.now();
    if (now - this.readAt >= this.maxAgeMs) {
      this.readAt = now;
      try {
        const stats = statfsSync(this.dir);
        this.free = stats.bavail * stats.bsize;
      } catch {
        // Not knowing is no reason to refuse writes; the storage-failure handling still catches a full disk.
        this.free = null;
      }
    }
    return this.free;
  }

  /** Why writes are refused now (free space under the minimum), or null. */
  refusal(): string | null {
    const free = this.minFreeBytes > 0 ? this.freeBytes() : null;
    const low = free !== null && free < this.minFreeBytes;
    if (low !== this.low) {
      this.low = low;
      this.onChange(low, free ?? 0);
    }
    if (!low) return null;
    return `The server is low on disk space and takes no changes until there is room again (${megabytes(free)} free, ${megabytes(this.minFreeBytes)} required)`;
  }
}

export function megabytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(bytes < 10 * 1024 * 1024 ? 1 : 0)} MiB`;
}
