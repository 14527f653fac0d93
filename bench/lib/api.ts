import { readFileSync } from 'node:fs';

export interface Credentials {
  email: string;
  key: string;
}

export type Json = Record<string, unknown>;

export interface ApiResult {
  status: number;
  body: Json;
}

export function basicAuth(credentials: Credentials): string {
  return `Basic ${Buffer.from(`${credentials.email}:${credentials.key}`).toString('base64')}`;
}

/** Form-encodes parameters as Zulip clients do: strings as they are, anything else as JSON text. */
export function formEncode(params: Record<string, unknown>): string {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) form.set(name, typeof value === 'string' ? value : JSON.stringify(value));
  return form.toString();
}

/** Reads the [api] section of the zuliprc the server writes on its first start. */
export function readZuliprc(path: string): Credentials {
  const values = new Map<string, string>();
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const at = line.indexOf('=');
    if (at > 0) values.set(line.slice(0, at).trim(), line.slice(at + 1).trim());
  }
  return { email: values.get('email') ?? '', key: values.get('key') ?? '' };
}

/** A small API client for seeding and setup (not for measuring): fetch, keep-alive, Basic auth. */
export class Api {
  constructor(readonly baseUrl: string) {}

  async call(method: string, path: string, params: Record<string, unknown>, credentials: Credentials | null): Promise<ApiResult> {
    const headers: Record<string, string> = {};
    if (credentials) headers.Authorization = basicAuth(credentials);
    const form = formEncode(params);
    let url = `${this.baseUrl}/api/v1${path}`;
    let body: string | undefined;
    if (method === 'GET') {
      if (form) url += `?${form}`;
    } else if (form) {
      body = form;
      headers['Content-Type'] = 'application/x-www-form-urlencoded';
    }
    const response = await fetch(url, { method, headers, body, signal: AbortSignal.timeout(30_000) });
    const text = await response.text();
    let parsed: Json;
    try {
      parsed = JSON.parse(text) as Json;
    } catch {
      parsed = { raw: text };
    }
    return { status: response.status, body: parsed };
  }

  /** Like call, but a non-200 answer is an error naming the request. */
  async ok(method: string, path: string, params: Record<string, unknown>, credentials: Credentials | null): Promise<Json> {
    const result = await this.call(method, path, params, credentials);
    if (result.status !== 200) throw new Error(`${method} ${path} answered ${result.status}: ${JSON.stringify(result.body)}`);
    return result.body;
  }
}

/** Runs fn over items with at most `limit` in flight; results in item order. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
