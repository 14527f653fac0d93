import { ChatError } from '../../actors/errors.ts';
import { JsonBytes } from '../../actors/wire/json-bytes.ts';
import type { ApiResponse, WrittenBody } from './request.ts';

const JSON_HEADERS = { 'Content-Type': 'application/json' };
const SUCCESS_HEAD = '{"result":"success","msg":"",';

/** A handler result whose fields are already JSON text (e.g. a queue's events, serialized once). */
export class RawFields {
  constructor(readonly json: string) {}
}

/**
 * Fields already JSON text and shared by many answers (a list serialized once per change): the whole
 * success body is encoded once, so an answer sends those bytes instead of copying and encoding a large
 * string per request. Keep one per shared text, not one per request.
 */
export class SharedFields extends RawFields {
  readonly bytes: Buffer;
  constructor(json: string) {
    super(json);
    this.bytes = Buffer.from(`{"result":"success","msg":"",${json}}`);
  }
}

/**
 * A handler result that writes its fields as UTF-8 itself (a poll's events, thousands of answers in a
 * fan-out: routes/events.ts), where text fields would be concatenated, flattened and converted to UTF-8 for
 * each answer; or gives them as text where the envelope holds more than its head and tail. As the body of a
 * success answer (WrittenBody) it is written when the answer is sent.
 */
export abstract class WrittenFields implements WrittenBody {
  write(): Uint8Array {
    return this.writeBody(SUCCESS_HEAD, '}');
  }

  /** The success body with more fields after these (JSON text from a comma on, ASCII): the ignored parameters. */
  endedWith(more: string): WrittenBody {
    return { write: () => this.writeBody(SUCCESS_HEAD, `${more}}`) };
  }

  /** The fields' JSON between `head` and `tail` (ASCII), as UTF-8 in memory that the next body written reuses. */
  protected abstract writeBody(head: string, tail: string): Uint8Array;

  /** the fields as JSON text, as RawFields holds them */
  abstract json(): string;
}

/**
 * Fields as JSON text in parts that other answers share (a registration's state, lists kept between
 * changes), written one after another into one writer as the answer is sent: never joined into one string,
 * which would be flattened and encoded to UTF-8 again for each answer, nor written into a writer per answer
 * waiting to be sent (encodedFields), fresh memory for each of several megabytes.
 */
export class PartsFields extends WrittenFields {
  constructor(private readonly parts: readonly string[]) {
    super();
  }

  protected writeBody(head: string, tail: string): Uint8Array {
    partsWriter.clear();
    partsWriter.rawParts([head, ...this.parts, tail]);
    return partsWriter.written();
  }

  json(): string {
    return this.parts.join('');
  }
}

/** The writer of every PartsFields answer: each is written and sent at once (WrittenFields). */
const partsWriter = new JsonBytes();

/**
 * Writers free for the next `encodedFields` answer. An answer keeps its writer until it is sent, which for a
 * read is once the commits it saw are durable (dispatch.ts, answerResult), so several may be out at once. The
 * answer goes to the socket from its writer's memory: copied into a buffer of its own, a GET /messages of 50
 * (about 25 KB) cost an allocation outside the heap, a copy and the allocator's growing and trimming of its
 * heap (bench/README.md, "GET /messages sent from its writer").
 */
const freeWriters: JsonBytes[] = [];
/**
 * Free writers kept at most: each holds 64 KB, up to 1 MB after a large answer (JsonBytes.clear), so at most
 * 16 MB. A burst of more answers waiting at once makes new writers.
 */
const FREE_WRITERS_KEPT = 16;

function release(out: JsonBytes): void {
  out.clear();
  if (freeWriters.length < FREE_WRITERS_KEPT) freeWriters.push(out);
}

/**
 * Fields the handler wrote as JSON bytes (`encodedFields`), the success body whole: a GET /messages answer
 * (about 25 KB for 50 messages) is not built as a string, joined and flattened again for the socket. As the
 * body of a success answer (WrittenBody) it is sent once, from its writer, which then serves another answer.
 */
export class EncodedFields implements WrittenBody {
  private out: JsonBytes | null;
  private more = '';

  constructor(out: JsonBytes) {
    this.out = out;
  }

  /** More fields (JSON text from a comma on) to end the answer with, written when it is sent. */
  append(fields: string): void {
    this.more += fields;
  }

  write(): Uint8Array {
    const out = this.out;
    if (out === null) throw new Error('an encoded answer is sent once');
    this.out = null;
    if (this.more) {
      // In place of the closing brace: the answer is not copied whole to end it (a registration can be megabytes).
      out.length -= 1;
      out.raw(this.more);
      out.char(0x7d);
    }
    const bytes = out.written();
    // The bytes stay as they are until the writer next writes, after the caller has sent them.
    release(out);
    return bytes;
  }
}

/**
 * Runs `write` now, which writes the answer's fields (JSON text from a key on, without braces) into the success
 * envelope. At once, in the handler: what it writes is the state of this turn.
 */
export function encodedFields(write: (out: JsonBytes) => void): EncodedFields {
  const out = freeWriters.pop() ?? new JsonBytes();
  try {
    out.raw(SUCCESS_HEAD);
    write(out);
    out.char(0x7d);
  } catch (error) {
    release(out);
    throw error;
  }
  return new EncodedFields(out);
}

/** A handler result that is the whole response, without the envelope: a file's bytes. */
export class DirectResponse {
  constructor(readonly response: ApiResponse) {}
}

export type HandlerResult = Record<string, unknown> | RawFields | WrittenFields | EncodedFields | DirectResponse;

/** The success envelope: result, msg, the operation's fields, and the parameters that were ignored. */
export function successResponse(result: HandlerResult, ignored: readonly string[]): ApiResponse {
  if (result instanceof DirectResponse) return result.response;
  let body: string;
  if (result instanceof SharedFields && ignored.length === 0) return { status: 200, headers: JSON_HEADERS, body: '', bytes: result.bytes };
  if (result instanceof EncodedFields) {
    if (ignored.length) result.append(`,"ignored_parameters_unsupported":${JSON.stringify(ignored)}`);
    return { status: 200, headers: JSON_HEADERS, body: '', written: result };
  }
  if (result instanceof WrittenFields) {
    if (ignored.length === 0) return { status: 200, headers: JSON_HEADERS, body: '', written: result };
    // Real clients send parameters this server does not take (a registration's `client_gravatar`); the names
    // are the client's own text, so only ASCII ones go in the tail written as bytes.
    const more = `,"ignored_parameters_unsupported":${JSON.stringify(ignored)}`;
    if (/^[\x20-\x7e]*$/.test(more)) return { status: 200, headers: JSON_HEADERS, body: '', written: result.endedWith(more) };
  }
  if (result instanceof RawFields || result instanceof WrittenFields) {
    body = SUCCESS_HEAD + (result instanceof RawFields ? result.json : result.json());
    body += ignored.length ? `,"ignored_parameters_unsupported":${JSON.stringify(ignored)}}` : '}';
  } else {
    const envelope: Record<string, unknown> = { result: 'success', msg: '', ...result };
    if (ignored.length) envelope.ignored_parameters_unsupported = ignored;
    body = JSON.stringify(envelope);
  }
  return { status: 200, headers: JSON_HEADERS, body };
}

/** The error envelope, the one place a ChatError becomes a response. */
export function errorResponse(error: ChatError): ApiResponse {
  const body = JSON.stringify({ result: 'error', msg: error.message, code: error.code, ...error.extra });
  return { status: error.status, headers: { ...JSON_HEADERS, ...error.headers }, body };
}
