import type { Logger } from '../log.ts';
import type { WebAssets } from '../web/build.ts';
import type { Dispatch } from './dispatch.ts';
import type { ApiRequest, ApiResponse } from './request.ts';

/**
 * Only scripts and styles of our own origin run, and images come only from this server (uploads, avatars,
 * emoji): an image of another host in a message would tell that host who read it, and when, from where (the
 * original proxies such images; this server does not load them). The page may not be framed.
 */
const CONTENT_SECURITY_POLICY = "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'";

/**
 * Serves the web client in front of the API: GET `/` (and `/index.html`) is the page, GET `/static/<name>` a
 * bundle file; everything else goes to `dispatch`. The bundle is built on the first such request and kept in
 * memory; a build that fails is answered with a 500 and tried again on the next request.
 */
export function withWebClient(dispatch: Dispatch, build: () => Promise<WebAssets>, log: Logger): Dispatch {
  let assets: Promise<WebAssets> | null = null;
  const load = () => {
    assets ??= build().catch((error: unknown) => {
      assets = null;
      throw error;
    });
    return assets;
  };

  const serve = async (path: string): Promise<ApiResponse> => {
    let files: WebAssets;
    try {
      files = await load();
    } catch (error) {
      log.error({ err: error }, 'building the web client failed');
      return text(500, 'The web client could not be built; the server log says why.');
    }
    const file = files.get(path);
    if (!file) return text(404, 'Not found');
    return {
      status: 200,
      headers: {
        'Content-Type': file.contentType,
        'Cache-Control': file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
        'X-Content-Type-Options': 'nosniff',
        ...(path === '/' ? { 'Content-Security-Policy': CONTENT_SECURITY_POLICY, 'Referrer-Policy': 'same-origin' } : {}),
      },
      ...(typeof file.body === 'string' ? { body: file.body } : { body: '', bytes: Buffer.from(file.body.buffer, file.body.byteOffset, file.body.byteLength) }),
    };
  };

  // Not an async function: the API's answers stay synchronous where dispatch's are (see handleApi).
  return Object.assign((request: ApiRequest) => {
    if (request.method !== 'GET') return dispatch(request);
    const path = request.path === '/index.html' ? '/' : request.path;
    if (path !== '/' && !path.startsWith('/static/')) return dispatch(request);
    return serve(path);
  }, { admit: dispatch.admit });
}

function text(status: number, body: string): ApiResponse {
  return { status, headers: { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' }, body };
}
