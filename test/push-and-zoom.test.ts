import t from 'tap';
import { MAX_PUSH_DEVICES } from '../actors/user/push-e2ee.ts';
import { drain, ofType, type Event } from './helpers/messages.ts';
import { OpenApi, type Schema } from './helpers/openapi.ts';
import { ApiClient, startTestServer } from './helpers/server.ts';
import { standIn } from './helpers/stand-in.ts';

/**
 * The operations behind the `push_device` and `has_zoom_token` events, against stand-ins for the services
 * they talk to (a push notification bouncer, Zoom's OAuth and API), which check what the real ones check.
 */
const api = new OpenApi();
const events = api.resolve((api.doc.paths['/events']!.get as any).responses['200'].content['application/json'].schema);
const variant = (type: string): Schema => api.resolve(api.properties(events).events!.items!).oneOf!.find((schema) => api.properties(schema).type?.allOf?.some((part) => part.enum?.[0] === type))!;

const basic = (client: ApiClient) => `Basic ${Buffer.from(`${client.credentials!.email}:${client.credentials!.key}`).toString('base64')}`;

/** Drains the queue until `count` events of the type came (the outcome of a background call arrives later). */
async function eventsOf(client: ApiClient, queueId: string, type: string, count: number): Promise<Event[]> {
  const seen: Event[] = [];
  let last = -1;
  while (seen.length < count) {
    const { body } = await client.get('/events', { queue_id: queueId, last_event_id: last });
    for (const event of body.events as Event[]) {
      last = Math.max(last, event.id as number);
      if (event.type === type) seen.push(event);
    }
  }
  return seen;
}

t.test('POST /mobile_push/register: checked, pending, then what the push service answers, as push_device events', async (t) => {
  const unset = await startTestServer(t);
  const key = Buffer.alloc(32, 7).toString('base64');
  const device = { token_kind: 'fcm', push_account_id: 2408, push_public_key: key, bouncer_public_key: 'bouncer-key-1', encrypted_push_registration: Buffer.from('ciphertext').toString('base64') };
  t.match((await unset.api.post('/mobile_push/register', device)).body, { code: 'PUSH_SERVICE_NOT_CONFIGURED' }, 'no push service: the original\'s answer');

  const registered: Record<string, string>[] = [];
  const bouncer = await standIn(t, (url, body, request) => {
    if (url.pathname !== '/api/v1/remotes/push/e2ee/register' || request.headers.authorization !== `Basic ${Buffer.from('server-1:server-key').toString('base64')}`) {
      return { status: 401, body: { result: 'error', code: 'UNAUTHORIZED', msg: 'bad credentials' } };
    }
    const fields = Object.fromEntries(body as URLSearchParams);
    registered.push(fields);
    return fields.bouncer_public_key === 'bouncer-key-1'
      ? { body: { result: 'success', msg: '', device_id: registered.length } }
      : { status: 400, body: { result: 'error', code: 'INVALID_BOUNCER_PUBLIC_KEY', msg: 'Invalid bouncer_public_key' } };
  });
  const { api: owner } = await startTestServer(t, { pushBouncer: { url: bouncer, serverId: 'server-1', serverKey: 'server-key' } });
  const { queueId } = await owner.register({ event_types: ['push_device'] });

  const badKey = await owner.post('/mobile_push/register', { ...device, push_public_key: 'not base64!' });
  t.same([badKey.status, badKey.body.msg], [400, 'Invalid push_public_key']);
  t.equal((await owner.post('/mobile_push/register', device)).status, 200);
  t.equal((await owner.post('/mobile_push/register', { ...device, push_account_id: 99, bouncer_public_key: 'retired-key' })).status, 200);
  const told = await eventsOf(owner, queueId, 'push_device', 4);
  const byAccount = (id: string) => told.filter((event) => event.push_account_id === id).map((event) => [event.status, event.error_code]);
  t.same(byAccount('2408'), [['pending', null], ['active', null]], 'pending, then active');
  t.same(byAccount('99'), [['pending', null], ['failed', 'INVALID_BOUNCER_PUBLIC_KEY']], 'pending, then failed with the service\'s code');
  for (const event of told) t.same(api.mismatches(event, variant('push_device'), 'push_device'), [], 'in the documented shape');
  t.match(registered[0], { push_account_id: '2408', bouncer_public_key: 'bouncer-key-1', encrypted_push_registration: device.encrypted_push_registration, realm_uuid: /^[0-9a-f-]{36}$/ });
  const { body } = await owner.register({ fetch_event_types: ['push_device'] });
  t.same(body.push_devices, { 2408: { status: 'active', error_code: null }, 99: { status: 'failed', error_code: 'INVALID_BOUNCER_PUBLIC_KEY' } });
  t.equal((await owner.post('/mobile_push/register', device)).status, 200, 'registering again changes nothing');
  t.equal(registered.length, 2);

  // A user has at most MAX_PUSH_DEVICES devices; one already registered may register again.
  for (let id = 1; id <= MAX_PUSH_DEVICES - 2; id++) {
    const { status, body } = await owner.post('/mobile_push/register', { ...device, push_account_id: 10_000 + id });
    if (status !== 200) t.fail(`device ${id}: ${JSON.stringify(body)}`);
  }
  const over = await owner.post('/mobile_push/register', { ...device, push_account_id: 20_000 });
  t.same([over.status, over.body.msg], [400, `You may register at most ${MAX_PUSH_DEVICES} push devices`], 'one device past the bound');
  t.equal((await owner.post('/mobile_push/register', { ...device, push_public_key: Buffer.alloc(32, 8).toString('base64') })).status, 200, 'at the bound, a device registers again with a new key');
  t.equal(Object.keys((await owner.register({ fetch_event_types: ['push_device'] })).body.push_devices).length, MAX_PUSH_DEVICES);
});

t.test('Zoom calls: without an OAuth app a clear error; with one, the OAuth flow stores the token (has_zoom_token) and calls use it', async (t) => {
  const unset = await startTestServer(t);
  t.same((await unset.api.post('/calls/zoom/create')).body, { result: 'error', msg: 'Zoom credentials have not been configured', code: 'BAD_REQUEST' });
  const unsetRegister = await fetch(`${unset.url}/calls/zoom/register`, { headers: { Authorization: basic(unset.api) }, redirect: 'manual' });
  t.same([unsetRegister.status, (await unsetRegister.json()).msg], [400, 'Zoom credentials have not been configured']);

  let revoked = false;
  const zoom = await standIn(t, (url, body, request) => {
    if (url.pathname === '/oauth/token') {
      const fields = body as URLSearchParams;
      const client = request.headers.authorization === `Basic ${Buffer.from('zoom-client:zoom-secret').toString('base64')}`;
      return client && fields.get('grant_type') === 'authorization_code' && fields.get('code') === 'good-code'
        ? { body: { access_token: 'access-1', refresh_token: 'refresh-1', expires_in: 3600, token_type: 'bearer' } }
        : { status: 400, body: { reason: 'Invalid authorization code', error: 'invalid_grant' } };
    }
    if (url.pathname === '/v2/users/me/meetings' && request.headers.authorization === 'Bearer access-1' && !revoked) {
      return { status: 201, body: { id: 1, join_url: 'https://zoom.example/j/1', settings: (body as Record<string, unknown>).settings } };
    }
    return { status: 401, body: { code: 124, message: 'Invalid access token.' } };
  });
  const { api: owner, url } = await startTestServer(t, { zoom: { clientId: 'zoom-client', clientSecret: 'zoom-secret', oauthUrl: zoom, apiUrl: `${zoom}/v2` } });
  const ann = await owner.createUser('ann@example.com', 'Ann');
  const { queueId } = await owner.register({ event_types: ['has_zoom_token'] });
  t.match((await owner.post('/calls/zoom/create')).body, { code: 'INVALID_ZOOM_TOKEN', msg: 'Invalid Zoom access token' }, 'not connected yet');

  const started = await fetch(`${url}/calls/zoom/register`, { headers: { Authorization: basic(owner) }, redirect: 'manual' });
  t.equal(started.status, 302);
  const authorize = new URL(started.headers.get('location')!);
  t.equal(`${authorize.origin}${authorize.pathname}`, `${zoom}/oauth/authorize`);
  t.match(Object.fromEntries(authorize.searchParams), { response_type: 'code', client_id: 'zoom-client', redirect_uri: `${url}/calls/zoom/complete` });
  const state = authorize.searchParams.get('state')!;
  const complete = (client: ApiClient, code: string) => fetch(`${url}/calls/zoom/complete?${new URLSearchParams({ code, state })}`, { headers: { Authorization: basic(client) } });
  const foreign = await complete(owner.as(ann), 'good-code');
  t.same([foreign.status, (await foreign.json()).msg], [400, 'Invalid Zoom session identifier'], 'another user cannot finish the flow');
  const wrongCode = await complete(owner, 'bad-code');
  t.same([wrongCode.status, (await wrongCode.json()).msg], [400, 'Invalid Zoom credentials']);
  t.equal((await complete(owner, 'good-code')).status, 200);
  t.equal((await owner.register({ fetch_event_types: ['video_calls'] })).body.has_video_token, true);

  t.same((await owner.post('/calls/zoom/create', { is_video_call: false })).body, { result: 'success', msg: '', url: 'https://zoom.example/j/1' });
  revoked = true;
  t.match((await owner.post('/calls/zoom/create')).body, { code: 'INVALID_ZOOM_TOKEN' }, 'a token Zoom refuses is dropped');
  t.equal((await owner.register({ fetch_event_types: ['video_calls'] })).body.has_video_token, false);

  const told = ofType(await drain(owner, queueId), 'has_zoom_token');
  t.same(told.map((event) => event.value), [true, false]);
  for (const event of told) t.same(api.mismatches(event, variant('has_zoom_token'), 'has_zoom_token'), [], 'in the documented shape');
});
