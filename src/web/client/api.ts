/** The server's REST API as the browser calls it: Basic auth, form-encoded parameters, JSON answers. */

export interface Credentials {
  email: string;
  apiKey: string;
}

/** An error answer from the server (`code` is the API's error code), or a failure to reach it (`code` 'NETWORK'). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export type Params = Record<string, unknown>;

// Answers are JSON objects of many shapes; callers read the fields they need.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

/** Strings as they are, anything else as JSON text: the wire convention of the API. */
function encode(params: Params): URLSearchParams {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined) form.set(name, typeof value === 'string' ? value : JSON.stringify(value));
  }
  return form;
}

export class Api {
  constructor(readonly credentials: Credentials | null) {}

  async call(method: string, path: string, params: Params = {}, init: RequestInit = {}): Promise<Json> {
    const headers: Record<string, string> = {};
    if (this.credentials) headers.Authorization = `Basic ${base64(`${this.credentials.email}:${this.credentials.apiKey}`)}`;
    let url = `/api/v1${path}`;
    let body: string | undefined;
    const form = encode(params);
    if (method === 'GET') {
      const query = form.toString();
      if (query) url += `?${query}`;
    } else {
      body = form.toString();
      headers['Content-Type'] = 'application/x-www-form-urlencoded';
    }
    let response: Response;
    try {
      response = await fetch(url, { method, headers, body, ...init });
    } catch (error) {
      if (error instanceof DOMException && error.name === 'AbortError') throw error;
      throw new ApiError(0, 'NETWORK', 'Cannot reach the server');
    }
    let answer: Json = null;
    try {
      answer = await response.json();
    } catch {
      // a proxy's error page, say: reported below by status
    }
    if (!response.ok || answer?.result !== 'success') {
      throw new ApiError(response.status, answer?.code ?? 'BAD_RESPONSE', answer?.msg ?? `The server answered ${response.status}`);
    }
    return answer;
  }

  get = (path: string, params?: Params, init?: RequestInit) => this.call('GET', path, params, init);
  post = (path: string, params?: Params, init?: RequestInit) => this.call('POST', path, params, init);
  patch = (path: string, params?: Params, init?: RequestInit) => this.call('PATCH', path, params, init);
  delete = (path: string, params?: Params, init?: RequestInit) => this.call('DELETE', path, params, init);
}

/** btoa for any text (email addresses may hold non-Latin-1 characters). */
function base64(text: string): string {
  return btoa(String.fromCharCode(...new TextEncoder().encode(text)));
}

const STORAGE_KEY = 'chat.credentials';

export function loadCredentials(): Credentials | null {
  try {
    const stored = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? 'null');
    return typeof stored?.email === 'string' && typeof stored?.apiKey === 'string' ? { email: stored.email, apiKey: stored.apiKey } : null;
  } catch {
    return null;
  }
}

export function saveCredentials(credentials: Credentials | null): void {
  if (credentials) localStorage.setItem(STORAGE_KEY, JSON.stringify(credentials));
  else localStorage.removeItem(STORAGE_KEY);
}
