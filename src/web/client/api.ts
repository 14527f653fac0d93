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

  private authorization(): Record<string, string> {
    return this.credentials ? { Authorization: `Basic ${base64(`${this.credentials.email}:${this.credentials.apiKey}`)}` } : {};
  }

  async call(method: string, path: string, params: Params = {}, init: RequestInit = {}): Promise<Json> {
    const headers: Record<string, string> = this.authorization();
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

  /** A file outside the API (an upload), fetched with the credentials. */
  async file(path: string): Promise<Blob> {
    const response = await fetch(path, { headers: this.authorization() });
    if (!response.ok) throw new ApiError(response.status, 'BAD_RESPONSE', `The server answered ${response.status}`);
    return response.blob();
  }

  /**
   * POST /user_uploads with the file as multipart form data; XMLHttpRequest rather than fetch, as only it
   * reports the upload's progress. Answers the file's URL.
   */
  upload(file: File, progress: (fraction: number) => void): Promise<{ url: string; filename: string }> {
    return new Promise((resolve, reject) => {
      const request = new XMLHttpRequest();
      request.open('POST', '/api/v1/user_uploads');
      for (const [name, value] of Object.entries(this.authorization())) request.setRequestHeader(name, value);
      request.upload.addEventListener('progress', (event) => event.lengthComputable && progress(event.loaded / event.total));
      request.addEventListener('load', () => {
        let answer: Json = null;
        try {
          answer = JSON.parse(request.responseText);
        } catch {
          // reported below by status
        }
        if (request.status === 200 && answer?.result === 'success') resolve({ url: answer.url, filename: answer.filename ?? file.name });
        else reject(new ApiError(request.status, answer?.code ?? 'BAD_RESPONSE', answer?.msg ?? `The server answered ${request.status}`));
      });
      request.addEventListener('error', () => reject(new ApiError(0, 'NETWORK', 'Cannot reach the server')));
      const form = new FormData();
      form.append('file', file, file.name);
      request.send(form);
    });
  }

  /** A multipart form (a file) to the API, as POST. */
  async postForm(path: string, form: FormData): Promise<Json> {
    return this.call('POST', path, {}, { body: form, headers: this.authorization() });
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
