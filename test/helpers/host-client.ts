import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { encodeParams, type Credentials, type Params } from './server.ts';

/** The password HostClient's createUser gives the users it makes. */
export const HOST_CLIENT_PASSWORD = 'host-Client-passw0rd';

export interface Answer {
  status: number;
  // Responses are JSON objects of many shapes; tests read the fields they check.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
  text: string;
  /** the body as received (a file's bytes) */
  bytes: Buffer;
  headers: IncomingHttpHeaders;
  /** what the request said (query and form), so that an error repeating it is not counted as a leak */
  sent: string;
}

/**
 * A client for one host (the realm is chosen by the Host header, which fetch() will not set), optionally
 * connecting from a chosen local address: on Linux every 127.x.y.z is the loopback, so a test can be many
 * clients at once.
 */
export class HostClient {
  constructor(
    readonly baseUrl: string,
    readonly host: string,
    readonly credentials: Credentials | null,
    readonly localAddress?: string,
  ) {}

  as(credentials: Credentials | null): HostClient {
    return new HostClient(this.baseUrl, this.host, credentials, this.localAddress);
  }

  from(localAddress: string): HostClient {
    return new HostClient(this.baseUrl, this.host, this.credentials, localAddress);
  }

  send(method: string, path: string, params: Params = {}, raw?: { body: Buffer; contentType: string }): Promise<Answer> {
    const form = encodeParams(params).toString();
    const root = !path.startsWith('/api/') && (path.startsWith('/user_uploads/') || path.startsWith('/user_avatars/'));
    let target = root ? path : `/api/v1${path}`;
    const headers: Record<string, string> = { Host: this.host };
    if (this.credentials) headers.Authorization = `Basic ${Buffer.from(`${this.credentials.email}:${this.credentials.key}`).toString('base64')}`;
    let body: Buffer | undefined;
    if (raw) {
      body = raw.body;
      headers['Content-Type'] = raw.contentType;
    } else if (method === 'GET' || method === 'DELETE') {
      if (form) target += `?${form}`;
    } else {
      body = Buffer.from(form);
      headers['Content-Type'] = 'application/x-www-form-urlencoded';
    }
    if (body) headers['Content-Length'] = String(body.length);
    const url = new URL(this.baseUrl);
    return new Promise((resolve, reject) => {
      const options = { hostname: url.hostname, port: url.port, path: target, method, headers, timeout: 10_000, localAddress: this.localAddress };
      const req = httpRequest(options, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const bytes = Buffer.concat(chunks);
          const text = bytes.toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // a file, not JSON
          }
          resolve({ status: response.statusCode ?? 0, body: parsed, text, bytes, headers: response.headers, sent: decodeURIComponent(form.replace(/\+/g, ' ')) });
        });
        response.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error('request timed out')));
      req.on('error', reject);
      req.end(body);
    });
  }

  get = (path: string, params?: Params) => this.send('GET', path, params);
  post = (path: string, params?: Params) => this.send('POST', path, params);
  patch = (path: string, params?: Params) => this.send('PATCH', path, params);
  delete = (path: string, params?: Params) => this.send('DELETE', path, params);

  async ok(method: string, path: string, params?: Params): Promise<Answer> {
    const answer = await this.send(method, path, params);
    if (answer.status !== 200) throw new Error(`${method} ${path} failed: ${answer.text}`);
    return answer;
  }

  upload(name: string, content: string): Promise<Answer> {
    const boundary = 'securityTestBoundary';
    const body = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: text/plain\r\n\r\n${content}\r\n--${boundary}--\r\n`,
    );
    return this.send('POST', '/user_uploads', {}, { body, contentType: `multipart/form-data; boundary=${boundary}` });
  }

  /** POST of one file as a multipart body (a custom emoji, an avatar). */
  postFile(path: string, fileName: string, bytes: Buffer): Promise<Answer> {
    const boundary = 'hostClientFileBoundary';
    const body = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="f1"; filename="${fileName}"\r\nContent-Type: application/octet-stream\r\n\r\n`),
      bytes,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    return this.send('POST', path, {}, { body, contentType: `multipart/form-data; boundary=${boundary}` });
  }

  async login(email: string, password = HOST_CLIENT_PASSWORD): Promise<HostClient> {
    const fetched = await this.as(null).ok('POST', '/fetch_api_key', { username: email, password });
    return this.as({ email, key: fetched.body.api_key });
  }

  async createUser(email: string, fullName: string): Promise<{ client: HostClient; userId: number }> {
    const created = await this.ok('POST', '/users', { email, password: HOST_CLIENT_PASSWORD, full_name: fullName });
    return { client: await this.login(email), userId: created.body.user_id };
  }
}
