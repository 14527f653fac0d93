import { createHash, createHmac, randomInt } from 'node:crypto';
import { badRequest } from '../../actors/errors.ts';
import type { Config } from '../config.ts';
import { sameKey } from '../http/auth.ts';
import { DirectResponse } from '../http/envelope.ts';
import { p } from '../http/params.ts';
import { route } from './route.ts';
import type { WireResponse } from '../../actors/wire/responses.ts';

/** How long the server waits for the BigBlueButton server to make a meeting. */
const BBB_TIMEOUT_MS = 10_000;

interface Meeting {
  meeting_id: string;
  name: string;
  lock_settings_disable_cam: boolean;
  /** who asked for the call: the meeting's moderator */
  moderator: number;
}

function configured(config: Config): { url: string; secret: string } {
  if (!config.bigBlueButton) throw badRequest('BigBlueButton is not configured.');
  return config.bigBlueButton;
}

/** The meeting's details travel in the link, signed so that nobody can point it at another meeting. */
const sign = (secret: string, payload: string) => createHmac('sha256', secret).update(`bigbluebutton:${payload}`).digest('base64url');

/** BigBlueButton's API checksum: SHA-256 of the call's name, its query and the shared secret. */
const checksum = (call: string, query: string, secret: string) => createHash('sha256').update(call + query + secret).digest('hex');

const query = (params: Record<string, string>) =>
  Object.entries(params).map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`).join('&');

/** A BigBlueButton answer's element text (its API answers in XML). */
const element = (xml: string, name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1];

/**
 * BigBlueButton video calls, as the original makes them: a user asks for a call link, which names a new
 * meeting signed by the server; following it makes the meeting on the BigBlueButton server and redirects
 * there, the link's creator as moderator.
 */
export const videoCallRoutes = [
  route({
    method: 'GET',
    path: '/calls/bigbluebutton/create',
    auth: 'user',
    params: { meeting_name: p.string(), voice_only: p.bool().default(false) },
    handle({ services, user }, params) {
      const { secret } = configured(services.config);
      const meeting: Meeting = {
        meeting_id: `zulip-${randomInt(100_000_000_000, 999_999_999_999)}`, name: params.meeting_name,
        lock_settings_disable_cam: params.voice_only, moderator: user.userId,
      };
      const payload = Buffer.from(JSON.stringify(meeting)).toString('base64url');
      return { url: `/calls/bigbluebutton/join?bigbluebutton=${payload}.${sign(secret, payload)}` } satisfies WireResponse<'/calls/bigbluebutton/create', 'get'>;
    },
  }),

  route({
    method: 'GET',
    path: '/calls/bigbluebutton/join',
    root: true,
    auth: 'optional',
    params: { bigbluebutton: p.string() },
    async handle({ services, user }, params) {
      const { url, secret } = configured(services.config);
      const [payload = '', signature = ''] = params.bigbluebutton.split('.');
      if (!sameKey(sign(secret, payload), signature)) throw badRequest('Invalid signature.');
      const meeting = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Meeting;
      const create = query({ meetingID: meeting.meeting_id, name: meeting.name, lockSettingsDisableCam: String(meeting.lock_settings_disable_cam) });
      let answer: string;
      try {
        const response = await fetch(`${url}api/create?${create}&checksum=${checksum('create', create, secret)}`, {
          signal: AbortSignal.timeout(BBB_TIMEOUT_MS), redirect: 'manual',
        });
        answer = await response.text();
        if (!response.ok) throw new Error(`HTTP ${response.status}: ${answer.slice(0, 200)}`);
      } catch (error) {
        throw badRequest(`Error connecting to the BigBlueButton server: ${error instanceof Error ? error.message : String(error)}`);
      }
      if (element(answer, 'returncode') !== 'SUCCESS') throw badRequest('BigBlueButton server returned an unexpected error.');
      const join = query({
        meetingID: meeting.meeting_id,
        role: user?.userId === meeting.moderator ? 'MODERATOR' : 'VIEWER',
        fullName: user?.fullName ?? 'Guest',
        createTime: element(answer, 'createTime') ?? '',
      });
      const location = `${url}api/join?${join}&checksum=${checksum('join', join, secret)}`;
      return new DirectResponse({ status: 302, headers: { Location: location, 'Cache-Control': 'no-store' }, body: '' });
    },
  }),
];
