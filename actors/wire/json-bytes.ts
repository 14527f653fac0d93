/** Any character JSON.stringify writes as an escape: quote, backslash, controls and lone surrogates. */
const NEEDS_ESCAPE = /["\\\u0000-\u001f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Where a buffer starts: a GET /messages of 50 writes about 25 KB. */
const INITIAL_CAPACITY = 64 * 1024;
/**
 * Text this short (a key, a flag's name) is copied a character at a time when it is ASCII: cheaper than a
 * call into Buffer.write, of which an answer of 50 messages would make over a thousand.
 */
const SHORT_TEXT = 32;
/** A buffer grown past this for a large answer (5,000 messages) is let go once it is cleared. */
const KEPT_CAPACITY = 1024 * 1024;
/**
 * Text longer than this is reserved for by its exact UTF-8 length rather than three bytes a character: a
 * registration's user list of 10,000 users is 3 MB of text.
 */
const LONG_TEXT = 64 * 1024;
/**
 * The largest buffer let go that is kept for the next large answer, one at most (`spare`): at 10,000 users every
 * registration wrote 3.5 MB, and into fresh memory each time that took four times as long as into memory
 * already touched (2026-11-29: 25 against 11 ms of CPU per registration; page faults on this machine).
 */
const SPARE_CAPACITY = 32 * 1024 * 1024;
let spare: Buffer | null = null;

/**
 * JSON text written as UTF-8 bytes into one buffer outside the V8 heap, for an answer written in one go
 * (GET /messages): its pieces are not strings to build, join and flatten before the socket takes them, which
 * was most of what a cold read of 50 messages allocated (bench/README.md, "Cold reads: the answer as
 * bytes"). Each method writes the bytes JSON.stringify's text has for the value. Written synchronously, then
 * sent (`written`) and cleared: one writer serves one answer at a time.
 */
export class JsonBytes {
  private buffer: Buffer;
  /** bytes written so far */
  length = 0;

  constructor(capacity = INITIAL_CAPACITY) {
    this.buffer = Buffer.allocUnsafeSlow(capacity);
  }

  /** JSON texts written as they are, one after another, in memory reserved for them all at once (a registration's parts). */
  rawParts(texts: readonly string[]): void {
    let bytes = 0;
    for (const text of texts) bytes += text.length > LONG_TEXT ? Buffer.byteLength(text) : text.length * 3;
    this.reserve(bytes);
    for (const text of texts) this.raw(text);
  }

  /** JSON text written as it is (already JSON: a cached view, a literal key). */
  raw(text: string): void {
    this.reserve(text.length > LONG_TEXT ? Buffer.byteLength(text) : text.length * 3);
    if (text.length <= SHORT_TEXT && this.ascii(text)) return;
    this.length += this.buffer.write(text, this.length);
  }

  /** A string as JSON.stringify writes it: escaped only when it has a character that needs it (rare). */
  string(text: string): void {
    if (NEEDS_ESCAPE.test(text)) return this.raw(JSON.stringify(text));
    this.reserve(text.length * 3 + 2);
    this.buffer[this.length++] = 0x22;
    if (text.length > SHORT_TEXT || !this.ascii(text)) this.length += this.buffer.write(text, this.length);
    this.buffer[this.length++] = 0x22;
  }

  /**
   * A string given as its UTF-8 bytes (a stored record's, msgpack: see bodies.ts), copied without decoding
   * it. False, with nothing written, when a byte would need an escape (a quote, a backslash, a control) or
   * encodes a lone surrogate (msgpackr writes one as three bytes): the caller decodes the string then.
   */
  utf8String(bytes: Uint8Array, start: number, end: number): boolean {
    this.reserve(end - start + 2);
    const buffer = this.buffer;
    let at = this.length;
    buffer[at++] = 0x22;
    for (let i = start; i < end; i++) {
      const byte = bytes[i]!;
      if (byte < 0x20 || byte === 0x22 || byte === 0x5c || (byte === 0xed && bytes[i + 1]! >= 0xa0)) return false;
      buffer[at++] = byte;
    }
    buffer[at++] = 0x22;
    this.length = at;
    return true;
  }

  /** A number as JSON.stringify writes it: a safe non-negative integer digit by digit, without a string. */
  number(value: number): void {
    if (!(value >= 0 && Number.isSafeInteger(value))) return this.raw(JSON.stringify(value));
    let digits = 1;
    for (let rest = value; rest >= 10; rest = Math.floor(rest / 10)) digits++;
    this.reserve(digits);
    let at = this.length + digits;
    this.length = at;
    let rest = value;
    do {
      this.buffer[--at] = 0x30 + (rest % 10);
      rest = Math.floor(rest / 10);
    } while (rest > 0);
  }

  boolean(value: boolean): void {
    this.raw(value ? 'true' : 'false');
  }

  /** One ASCII character: a comma, a bracket, a brace. */
  char(code: number): void {
    this.reserve(1);
    this.buffer[this.length++] = code;
  }

  /**
   * The bytes written since `start`, to keep (a cached view), as a string of one character per byte (latin1):
   * `bytes` writes them back as they are, a copy of one-byte characters, where writing a text encodes it
   * to UTF-8 a character at a time (over a third of a warm answer's cost).
   */
  bytesFrom(start: number): string {
    return this.buffer.toString('latin1', start, this.length);
  }

  /** Bytes kept by `bytesFrom`. */
  bytes(kept: string): void {
    this.reserve(kept.length);
    this.length += this.buffer.write(kept, this.length, 'latin1');
  }

  /** Forgets what was written (an answer given up half-way). */
  clear(): void {
    this.length = 0;
    if (this.buffer.length <= KEPT_CAPACITY) return;
    if (this.buffer.length <= SPARE_CAPACITY && (spare === null || spare.length < this.buffer.length)) spare = this.buffer;
    this.buffer = Buffer.allocUnsafeSlow(INITIAL_CAPACITY);
  }

  /** Everything written, in the writer's own memory: valid until the writer next writes (send it at once, or copy it). */
  written(): Uint8Array {
    return this.buffer.subarray(0, this.length);
  }

  /** Copies ASCII text (room reserved) and says so; false, with nothing written, for any other character. */
  private ascii(text: string): boolean {
    const buffer = this.buffer;
    const start = this.length;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      if (code >= 0x80) return false;
      buffer[start + i] = code;
    }
    this.length = start + text.length;
    return true;
  }

  private reserve(bytes: number): void {
    if (this.length + bytes <= this.buffer.length) return;
    const wanted = Math.max(this.buffer.length * 2, this.length + bytes);
    let grown: Buffer;
    if (spare !== null && spare.length >= wanted) {
      grown = spare;
      spare = null;
    } else {
      grown = Buffer.allocUnsafeSlow(wanted);
    }
    this.buffer.copy(grown, 0, 0, this.length);
    this.buffer = grown;
  }
}
