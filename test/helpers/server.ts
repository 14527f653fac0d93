import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type RunningServer } from '../../src/app.ts';
import { defaultConfig, type Config } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';

export interface Credentials {
  email: string;
  key: string;
}

export interface TestServer {
  server: RunningServer;
  url: string;
  dataDir: string;
  owner: Credentials;
  ownerPassword: string;
  api: ApiClient;
  stop(): Promise<void>;
}

/** The owner's password in test servers; strong enough for the password check. */
export const OWNER_PASSWORD = 'test-owner-Passw0rd-long';

export function tempDir(prefix = 'chat-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Reads the [api] section of a zuliprc file. */
export function readZuliprc(path: string): Credentials & { site: string } {
  const values: Record<string, string> = Object.fromEntries(
    readFileSync(path, 'utf8')
      .split('\n')
      .map((line) => line.split('='))
      .filter((parts) => parts.length === 2)
      .map(([key, value]) => [key!.trim(), value!.trim()]),
  );
  return { email: values.email ?? '', key: values.key ?? '', site: values.site ?? '' };
}

/**
 * Starts the real server in this process on a free port with a fresh LMDB directory. `t.teardown` stops it
 * and removes the directory.
 */
export async function startTestServer(
  t: { teardown(fn: () => unknown): void },
  overrides: Partial<Config> = {},
): Promise<TestServer> {
  const dataDir = overrides.dataDir ?? tempDir();
  const config = defaultConfig({
    port: 0,
    dataDir,
    ownerPassword: OWNER_PASSWORD,
    waitForFlush: false,
    // Tests build the channels they need; test/starter-channels.test.ts covers the default ones.
    starterChannels: [],
    ...overrides,
  });
  const server = await startServer(config, createLogger(process.env.TEST_LOG_LEVEL ?? 'silent'), () => {});
  const rc = readZuliprc(server.zuliprc);
  const owner = { email: rc.email, key: rc.key };
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await server.stop();
  };
  t.teardown(async () => {
    await stop();
    if (!overrides.dataDir) rmSync(dataDir, { recursive: true, force: true });
  });
  return { server, url: server.url, dataDir, owner, ownerPassword: OWNER_PASSWORD, api: new ApiClient(server.url, owner), stop };
}

export interface ApiResult {
  status: number;
  headers: Headers;
  // Responses are JSON objects of many shapes; tests read the fields they check.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

export type Params = Record<string, unknown>;

/** Form-encodes parameters the way Zulip clients do: strings as they are, anything else as JSON text. */
export function encodeParams(params: Params): URLSearchParams {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined) continue;
    form.set(name, typeof value === 'string' ? value : JSON.stringify(value));
  }
  return form;
}

/** A small HTTP client for the API: Basic auth, GET parameters in the query, others in a form body. */
export class ApiClient {
  constructor(
    readonly baseUrl: string,
    readonly credentials: Credentials | null,
    private readonly extraHeaders: Record<string, string> = {},
  ) {}

  as(credentials: Credentials | null, extraHeaders: Record<string, string> = {}): ApiClient {
    return new ApiClient(this.baseUrl, credentials, extraHeaders);
  }

  async request(method: string, path: string, params: Params = {}, init: RequestInit = {}): Promise<ApiResult> {
    const form = encodeParams(params);
    let url = `${this.baseUrl}/api/v1${path}`;
    const headers: Record<string, string> = { ...this.extraHeaders };
    if (this.credentials) {
      headers.Authorization = `Basic ${Buffer.from(`${this.credentials.email}:${this.credentials.key}`).toString('base64')}`;
    }
    let body: string | undefined;
    if (method === 'GET') {
      const query = form.toString();
      if (query) url += `?${query}`;
    } else if ([...form.keys()].length > 0) {
      body = form.toString();
      headers['Content-Type'] = 'application/x-www-form-urlencoded';
    }
    const response = await fetch(url, { method, headers, body, ...init });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
    }
    return { status: response.status, headers: response.headers, body: parsed };
  }

  get = (path: string, params?: Params, init?: RequestInit) => this.request('GET', path, params, init);
  post = (path: string, params?: Params, init?: RequestInit) => this.request('POST', path, params, init);
  patch = (path: string, params?: Params, init?: RequestInit) => this.request('PATCH', path, params, init);
  delete = (path: string, params?: Params, init?: RequestInit) => this.request('DELETE', path, params, init);

  /** Creates a user through the API (as this client's user, who must be allowed to) and returns its credentials. */
  async createUser(email: string, fullName = email.split('@')[0]!, password = 'a-Strong-passw0rd-for-tests'): Promise<Credentials & { userId: number }> {
    const created = await this.post('/users', { email, password, full_name: fullName });
    if (created.status !== 200) throw new Error(`createUser failed: ${JSON.stringify(created.body)}`);
    const fetched = await this.as(null).post('/fetch_api_key', { username: email, password });
    if (fetched.status !== 200) throw new Error(`fetch_api_key failed: ${JSON.stringify(fetched.body)}`);
    return { email, key: fetched.body.api_key, userId: created.body.user_id };
  }

  async register(params: Params = {}): Promise<{ queueId: string; body: ApiResult['body'] }> {
    const result = await this.post('/register', params);
    if (result.status !== 200) throw new Error(`register failed: ${JSON.stringify(result.body)}`);
    return { queueId: result.body.queue_id, body: result.body };
  }
}
