/** Typed arrays are written in the platform's byte order (chunks.ts bytesOf); a DataView is told which. */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * A column of 32-bit integers as a record holds it (Int32Array or Uint32Array bytes at any offset of the
 * decoded record), read in place. Copying it into an aligned typed array allocated a buffer outside the heap
 * per column per chunk read: the external memory of cold reads, which made V8 collect every few
 * milliseconds (bench/README.md, "Cold reads without cache churn").
 */
export class Int32Column {
  private readonly view: DataView;
  readonly length: number;

  constructor(bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.length = bytes.byteLength >> 2;
  }

  at(index: number): number {
    return this.view.getInt32(index << 2, LITTLE_ENDIAN);
  }

  /** as unsigned (a Uint32Array's bytes: timestamps) */
  unsignedAt(index: number): number {
    return this.view.getUint32(index << 2, LITTLE_ENDIAN);
  }

  /** The index of `value` in a column sorted ascending, or -1. */
  indexOf(value: number): number {
    let low = 0;
    let high = this.length - 1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      const found = this.at(middle);
      if (found === value) return middle;
      if (found < value) low = middle + 1;
      else high = middle - 1;
    }
    return -1;
  }
}
