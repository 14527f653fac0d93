import { createHmac } from 'node:crypto';
import { badRequest, ChatError, ErrorCode } from '../../actors/errors.ts';
import type { VideoToken } from '../../actors/user/state.ts';
import type { Config } from '../config.ts';
import { sameKey } from '../http/auth.ts';
import { DirectResponse } from '../http/envelope.ts';
import { p } from '../http/params.ts';
import type { AppServices } from '../services.ts';
import { route } from './route.ts';

/** How long the service takes to answer, and how long a started OAuth flow may take to come back. */
const ZOOM_TIMEOUT_MS = 10_000;
const OAUTH_STATE_MS = 15 * 60_000;

type Zoom = NonNullable<Config['zoom']>;

function configured(config: Config): Zoom {
  if (!config.zoom) throw badRequest('Zoom credentials have not been configured');
  return config.zoom;
}

const invalidToken = () => new ChatError(ErrorCode.INVALID_ZOOM_TOKEN, 'Invalid Zoom access token');

/** The OAuth `state`: who started the flow, in which organization, until when; signed with the app's secret. */
function signState(zoom: Zoom, payload: string): string {
  return createHmac('sha256', zoom.clientSecret).update(`zoom-oauth:${payload}`).digest('base64url');
}

const redirectUri = (services: AppServices, realm: Parameters<AppServices['realmUrl']>[0]) => new URL('/calls/zoom/complete', services.realmUrl(realm)).href;

async function setToken(services: AppServices, realmId: number, userId: number, token: VideoToken | null): Promise<void> {
  await services.runtime.executeUser(realmId, userId, { type: 'video_token.set', token });
}

/**
 * Zoom calls through Zoom's user OAuth integration, as the original makes them: a user connects their Zoom
 * account once (register, then Zoom sends the browser back to complete, which stores the token and tells the
 * user's clients `has_zoom_token`), then each call is a meeting made with that token. A token Zoom refuses is
 * dropped, which tells the clients too. Without an OAuth app configured every step answers so.
 */
export const zoomRoutes = [
  route({
    method: 'GET',
    path: '/calls/zoom/register',
    root: true,
    auth: 'user',
    params: {},
    handle({ services, realm, user }) {
      const zoom = configured(services.config);
      const payload = Buffer.from(JSON.stringify({ realm: realm.realmId, user: user.userId, until: Date.now() + OAUTH_STATE_MS })).toString('base64url');
      const query = new URLSearchParams({ response_type: 'code', client_id: zoom.clientId, redirect_uri: redirectUri(services, realm), state: `${payload}.${signState(zoom, payload)}` });
      return new DirectResponse({ status: 302, headers: { Location: `${zoom.oauthUrl}/oauth/authorize?${query}`, 'Cache-Control': 'no-store' }, body: '' });
    },
  }),

  route({
    method: 'GET',
    path: '/calls/zoom/complete',
    root: true,
    auth: 'user',
    params: { code: p.string(), state: p.string() },
    async handle({ services, realm, user }, params) {
      const zoom = configured(services.config);
      const [payload = '', signature = ''] = params.state.split('.');
      if (!sameKey(signState(zoom, payload), signature)) throw badRequest('Invalid Zoom session identifier');
      const state = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { realm: number; user: number; until: number };
      // The flow finishes for the user who started it, in time: a link of someone else's flow stores nothing.
      if (state.realm !== realm.realmId || state.user !== user.userId || Date.now() > state.until) throw badRequest('Invalid Zoom session identifier');
      let answer: { access_token?: unknown; refresh_token?: unknown; expires_in?: unknown };
      try {
        const response = await fetch(`${zoom.oauthUrl}/oauth/token`, {
          method: 'POST',
          headers: { Authorization: `Basic ${Buffer.from(`${zoom.clientId}:${zoom.clientSecret}`).toString('base64')}` },
          body: new URLSearchParams({ grant_type: 'authorization_code', code: params.code, redirect_uri: redirectUri(services, realm) }),
          signal: AbortSignal.timeout(ZOOM_TIMEOUT_MS),
        });
        answer = (await response.json()) as typeof answer;
        if (!response.ok || typeof answer.access_token !== 'string') throw new Error(`HTTP ${response.status}`);
      } catch {
        throw badRequest('Invalid Zoom credentials');
      }
      await setToken(services, realm.realmId, user.userId, {
        accessToken: answer.access_token as string,
        refreshToken: typeof answer.refresh_token === 'string' ? answer.refresh_token : null,
        expiresAt: typeof answer.expires_in === 'number' ? Date.now() + answer.expires_in * 1000 : null,
      });
      // The window the client opened for the flow has done its part.
      return new DirectResponse({
        status: 200, headers: { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' },
        body: '<!doctype html><title>Zoom connected</title><p>Your Zoom account is connected. You may close this window.</p><script>window.close()</script>',
      });
    },
  }),

  route({
    method: 'POST',
    path: '/calls/zoom/create',
    auth: 'user',
    params: { is_video_call: p.bool().default(true) },
    async handle({ services, realm, user }, params) {
      const zoom = configured(services.config);
      const token = services.runtime.userState(realm.realmId, user.userId).videoToken;
      if (!token) throw invalidToken();
      let response: Response;
      try {
        response = await fetch(`${zoom.apiUrl}/users/me/meetings`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${token.accessToken}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ settings: { host_video: params.is_video_call, participant_video: params.is_video_call } }),
          signal: AbortSignal.timeout(ZOOM_TIMEOUT_MS),
        });
      } catch {
        throw badRequest('Failed to create Zoom call');
      }
      if (response.status === 401) {
        await setToken(services, realm.realmId, user.userId, null);
        throw invalidToken();
      }
      const meeting = (await response.json().catch(() => ({}))) as { join_url?: unknown };
      if (!response.ok || typeof meeting.join_url !== 'string') throw badRequest('Failed to create Zoom call');
      return { url: meeting.join_url };
    },
  }),
];
