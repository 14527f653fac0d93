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
export async function readForm(query: string, contentType: string, body: Buffer, files?: UploadedFile[]): Promise<Map<string, string>> {
  const values = new Map<string, string>();
  if (query) for (const [name, value] of new URLSearchParams(query)) values.set(name, value);
  if (body.length === 0) return values;
  const type = contentType.split(';', 1)[0]!.trim().toLowerCase();
  if (type === 'multipart/form-data') {
    for (const [name, value] of await readMultipart(contentType, body, files)) values.set(name, value);
  } else if (type === 'application/x-www-form-urlencoded' || type === '') {
    for (const [name, value] of new URLSearchParams(body.toString('utf8'))) values.set(name, value);
  } else {
    throw badRequest(`Unsupported content type: ${type}`);
  }
  return values;
}

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
