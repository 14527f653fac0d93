import busboy from 'busboy';
import { badRequest } from '../../actors/errors.ts';
import { MAX_UPLOAD_BYTES } from '../../actors/realm/attachments/decide.ts';

/** One byte past the realm's upload limit, so that a file over the limit is seen to be over it. */
const FILE_SIZE_LIMIT = MAX_UPLOAD_BYTES + 1;

/**
 * Reads the parameters of a request: the query string, then the body (form-urlencoded or multipart),
 * body values winning. Zulip clients send GET parameters in the query string, and some send PATCH and
 * DELETE parameters there too.
 */
export function readForm(query: string, contentType: string, body: Buffer, files?: UploadedFile[]): Map<string, string> | Promise<Map<string, string>> {
  const values = new Map<string, string>();
  if (query) readUrlEncoded(query, values);
  if (body.length === 0) return values;
  const type = contentType.split(';', 1)[0]!.trim().toLowerCase();
  if (type === 'multipart/form-data') {
    // Only a multipart body is read asynchronously: a long-poll's parameters are there at once.
    return readMultipart(contentType, body, files).then((fields) => {
      for (const [name, value] of fields) values.set(name, value);
      return values;
    });
  } else if (type === 'application/x-www-form-urlencoded' || type === '') {
    readUrlEncoded(body.toString('utf8'), values);
  } else {
    throw badRequest(`Unsupported content type: ${type}`);
  }
  return values;
}

/**
 * application/x-www-form-urlencoded into `values`, later names winning, as URLSearchParams reads it: split
 * here, without its iterator and entry arrays, each name and value decoded on its own (decodeComponent).
 * URLSearchParams cost about 2 us of a message send's 45 on the event loop (2026-11-26).
 */
function readUrlEncoded(text: string, values: Map<string, string>): void {
  const encoded = text.includes('%') || text.includes('+');
  let start = text.charCodeAt(0) === QUESTION_MARK ? 1 : 0;
  while (start <= text.length) {
    let end = text.indexOf('&', start);
    if (end < 0) end = text.length;
    if (end > start) {
      const equals = text.indexOf('=', start);
      const name = equals < 0 || equals > end ? text.slice(start, end) : text.slice(start, equals);
      const value = equals < 0 || equals > end ? '' : text.slice(equals + 1, end);
      values.set(encoded ? decodeComponent(name) : name, encoded ? decodeComponent(value) : value);
    }
    start = end + 1;
  }
}

/**
 * A name or value as URLSearchParams decodes it: `+` is a space, and percent escapes are UTF-8 bytes. Where
 * decodeURIComponent accepts the escapes it gives the same text; where it refuses them (a `%` without two
 * hex digits after it, bytes that are not UTF-8), URLSearchParams itself decodes the part, keeping the
 * stray `%` and putting U+FFFD for the bytes.
 */
function decodeComponent(part: string): string {
  const spaced = part.includes('+') ? part.replaceAll('+', ' ') : part;
  if (!spaced.includes('%')) return spaced;
  try {
    return decodeURIComponent(spaced);
  } catch {
    // The part holds no `&`, and a value's `=` stays in it: it is the whole value of `v`.
    return new URLSearchParams(`v=${part}`).get('v')!;
  }
}

const QUESTION_MARK = 0x3f;

/** A file part of a multipart body; `truncated` when it was larger than the size limit (the rest is dropped). */
export interface UploadedFile {
  field: string;
  name: string;
  type: string;
  data: Buffer;
  truncated: boolean;
}

/**
 * Files are read only for routes that take them (`files` in the route), into `files`, each cut at
 * `FILE_SIZE_LIMIT` bytes; other routes skip them.
 */
function readMultipart(contentType: string, body: Buffer, files?: UploadedFile[]): Promise<[string, string][]> {
  return new Promise((resolve, reject) => {
    const fields: [string, string][] = [];
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: { 'content-type': contentType }, defParamCharset: 'utf8', limits: { fileSize: FILE_SIZE_LIMIT } });
    } catch {
      reject(badRequest('Malformed multipart body'));
      return;
    }
    parser.on('field', (name, value) => fields.push([name, value]));
    parser.on('file', (field, stream, info) => {
      if (!files) {
        stream.resume();
        return;
      }
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        files.push({ field, name: info.filename ?? '', type: info.mimeType, data: Buffer.concat(chunks), truncated: (stream as { truncated?: boolean }).truncated === true });
      });
    });
    parser.on('error', () => reject(badRequest('Malformed multipart body')));
    parser.on('close', () => resolve(fields));
    parser.end(body);
  });
}
