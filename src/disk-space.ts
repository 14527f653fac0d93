import { statfsSync } from 'node:fs';
import { ChatError, ErrorCode } from '../actors/errors.ts';

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
  /** bytes of uploads being written now, counted as taken until they are on disk (and in the reading) */
  private pendingUploads = 0;

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
    if (performance.now() - this.readAt >= this.maxAgeMs) this.read();
    return this.free;
  }

  private read(): number | null {
    this.readAt = performance.now();
    try {
      const stats = statfsSync(this.dir);
      this.free = stats.bavail * stats.bsize;
    } catch {
      // Not knowing is no reason to refuse writes; the storage-failure handling still catches a full disk.
      this.free = null;
    }
    return this.free;
  }

  /**
   * Why a file of `bytes` may not be stored now, or null. Uploads stop while they would leave less than
   * twice the minimum free, so that files never take the room the log and snapshots need: a member's
   * uploads cannot make every organization read-only. The disk is read afresh (uploads are few, and large
   * enough to overshoot a second-old reading), and the uploads still being written count as taken.
   */
  uploadRefusal(bytes: number): string | null {
    if (this.minFreeBytes <= 0) return null;
    const free = this.read();
    if (free === null) return null;
    const left = free - this.pendingUploads - bytes;
    const required = 2 * this.minFreeBytes;
    if (left >= required) return null;
    return `The server is low on disk space and takes no uploads until there is room again (${megabytes(Math.max(0, free - this.pendingUploads))} free, ${megabytes(required + bytes)} required for this file)`;
  }

  /** Holds room for a file about to be written, or refuses it (see uploadRefusal); the result lets it go. */
  reserveUpload(bytes: number): () => void {
    const refusal = this.uploadRefusal(bytes);
    if (refusal !== null) throw lowOnSpace(refusal);
    this.pendingUploads += bytes;
    let held = true;
    return () => {
      if (held) this.pendingUploads -= bytes;
      held = false;
    };
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

/** As the runtime refuses writes while the disk is low: 503, the server's condition rather than the request's. */
export const lowOnSpace = (reason: string) => new ChatError(ErrorCode.INTERNAL_SERVER_ERROR, reason, 503);

export function megabytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(bytes < 10 * 1024 * 1024 ? 1 : 0)} MiB`;
}
