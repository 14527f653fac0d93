import busboy from 'busboy';
import { badRequest } from '../../actors/errors.ts';

/**
 * Reads the parameters of a request: the query string, then the body (form-urlencoded or multipart),
 * body values winning. Zulip clients send GET parameters in the query string, and some send PATCH and
 * DELETE parameters there too.
 */
export async function readForm(query: string, contentType: string, body: Buffer): Promise<Map<string, string>> {
  const values = new Map<string, string>();
  if (query) for (const [name, value] of new URLSearchParams(query)) values.set(name, value);
  if (body.length === 0) return values;
  const type = contentType.split(';', 1)[0]!.trim().toLowerCase();
  if (type === 'multipart/form-data') {
    for (const [name, value] of await readMultipart(contentType, body)) values.set(name, value);
  } else if (type === 'application/x-www-form-urlencoded' || type === '') {
    for (const [name, value] of new URLSearchParams(body.toString('utf8'))) values.set(name, value);
  } else {
    throw badRequest(`Unsupported content type: ${type}`);
  }
  return values;
}

function readMultipart(contentType: string, body: Buffer): Promise<[string, string][]> {
  return new Promise((resolve, reject) => {
    const fields: [string, string][] = [];
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: { 'content-type': contentType }, defParamCharset: 'utf8' });
    } catch {
      reject(badRequest('Malformed multipart body'));
      return;
    }
    parser.on('field', (name, value) => fields.push([name, value]));
    // Files are not parameters; the upload endpoints read them on their own.
    parser.on('file', (_name, stream) => stream.resume());
    parser.on('error', () => reject(badRequest('Malformed multipart body')));
    parser.on('close', () => resolve(fields));
    parser.end(body);
  });
}
