import t from 'tap';
import type { IncomingHttpHeaders } from 'node:http';
import { HostClient } from './helpers/host-client.ts';
import { startTestServer, type ApiClient, type ApiResult, type Credentials } from './helpers/server.ts';

const PASSWORD = 'a-Strong-passw0rd-for-tests';

// A subtest, as `t.test` hands it to its callback.
type Test = Parameters<Parameters<typeof t.test>[0]>[0];

interface Answer {
  status: number;
  headers: Headers | IncomingHttpHeaders;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

function header(answer: Answer, name: string): string | null {
  if (answer.headers instanceof Headers) return answer.headers.get(name);
  const value = answer.headers[name.toLowerCase()];
  return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
}

function isError(t: Test, response: Answer, status: number, code: string, msg?: string | RegExp): void {
  t.equal(response.status, status, `HTTP ${status}`, { body: response.body });
  t.equal(response.body?.result, 'error', 'error envelope');
  t.equal(response.body?.code, code, `code ${code}`);
  if (msg !== undefined) t.match(response.body?.msg, msg, 'error message');
}

function isSuccess(t: Test, response: ApiResult | Answer, what: string): void {
  t.equal(response.status, 200, `${what}: HTTP 200`, { body: response.body });
  t.equal(response.body?.result, 'success', `${what}: success envelope`);
}

/**
 * A request with a chosen Host header. fetch() does not let a caller set Host, so this goes through
 * node:http directly.
 */
function withHost(
  baseUrl: string,
  host: string,
  method: string,
  path: string,
  options: { credentials?: Credentials; form?: Record<string, unknown> } = {},
): Promise<Answer> {
  return new HostClient(baseUrl, host, options.credentials ?? null).send(method, path, options.form ?? {});
}

async function myId(api: ApiClient): Promise<number> {
  const me = await api.get('/users/me');
  if (me.status !== 200) throw new Error(`GET /users/me failed: ${JSON.stringify(me.body)}`);
  return me.body.user_id;
}

/** A well-formed key (32 of [A-Za-z0-9]) that differs from the given one. */
function otherKey(key: string): string {
  const swapped = key[0] === 'A' ? 'B' : 'A';
  return swapped + key.slice(1);
}

t.test('HTTP Basic authentication failures', async (t) => {
  const { api, owner } = await startTestServer(t);

  const missing = await api.as(null).get('/users/me');
  isError(t, missing, 401, 'UNAUTHORIZED', 'Missing authorization header for basic auth');
  t.equal(header(missing, 'WWW-Authenticate'), 'Basic realm="zulip"', 'WWW-Authenticate names the Basic realm');

  isError(t, await api.as({ email: owner.email, key: 'short' }).get('/users/me'), 401, 'UNAUTHORIZED', 'Malformed API key');
  isError(t, await api.as({ email: owner.email, key: `${owner.key}X` }).get('/users/me'), 401, 'UNAUTHORIZED', 'Malformed API key');
  isError(
    t,
    await api.as({ email: owner.email, key: `${owner.key.slice(0, 31)}-` }).get('/users/me'),
    401,
    'UNAUTHORIZED',
    'Malformed API key',
  );

  t.not(otherKey(owner.key), owner.key);
  isError(t, await api.as({ email: owner.email, key: otherKey(owner.key) }).get('/users/me'), 401, 'UNAUTHORIZED', 'Invalid API key');
  isError(t, await api.as({ email: 'nobody@example.com', key: owner.key }).get('/users/me'), 401, 'UNAUTHORIZED', 'Invalid API key');

  const user = await api.createUser('deactivated@example.com', 'Soon Gone');
  isSuccess(t, await api.as(user).get('/users/me'), 'the user works before deactivation');
  isSuccess(t, await api.delete(`/users/${user.userId}`), 'deactivate the user');
  isError(t, await api.as(user).get('/users/me'), 401, 'USER_DEACTIVATED');

  isSuccess(t, await api.get('/users/me'), 'the right credentials still work');
});

t.test('the realm is chosen by the Host header', async (t) => {
  const { url, owner } = await startTestServer(t, { externalUrl: 'http://chat.test' });

  const bare = await withHost(url, 'chat.test', 'GET', '/users/me', { credentials: owner });
  isSuccess(t, bare, 'the bare host is the default realm');
  t.equal(bare.body.email, owner.email, 'the owner of the default realm');
  const withPort = await withHost(url, 'chat.test:8080', 'GET', '/users/me', { credentials: owner });
  isSuccess(t, withPort, 'a port in the Host header does not matter');

  const unknown = await withHost(url, 'nosuch.chat.test', 'GET', '/users/me', { credentials: owner });
  isError(t, unknown, 404, 'NONEXISTENT_SUBDOMAIN');
  isError(t, await withHost(url, 'nosuch.chat.test', 'GET', '/server_settings'), 404, 'NONEXISTENT_SUBDOMAIN');
  isError(
    t,
    await withHost(url, 'nosuch.chat.test', 'POST', '/fetch_api_key', { form: { username: owner.email, password: 'whatever-it-is' } }),
    404,
    'NONEXISTENT_SUBDOMAIN',
  );

  const settings = await withHost(url, 'chat.test', 'GET', '/server_settings');
  isSuccess(t, settings, 'server_settings on the bare host');
  t.equal(settings.body.realm_url, 'http://chat.test', 'realm_url is the external URL');
  t.match(settings.body.realm_icon, /\?version=\d+$/, 'the realm icon, as registration has it');
});

t.test('POST /fetch_api_key', async (t) => {
  const { api, owner, ownerPassword } = await startTestServer(t);
  const anonymous = api.as(null);
  const ownerId = await myId(api);

  const fetched = await anonymous.post('/fetch_api_key', { username: owner.email, password: ownerPassword });
  isSuccess(t, fetched, 'right password');
  t.equal(fetched.body.api_key, owner.key, 'the API key');
  t.equal(fetched.body.email, owner.email, 'the email');
  t.equal(fetched.body.user_id, ownerId, 'the user id');

  const wrong = await anonymous.post('/fetch_api_key', { username: owner.email, password: 'not-the-Passw0rd-at-all' });
  isError(t, wrong, 401, 'AUTHENTICATION_FAILED', 'Your username or password is incorrect');
  t.equal(wrong.body.api_key, undefined, 'no key on failure');

  const unknown = await anonymous.post('/fetch_api_key', { username: 'nobody@example.com', password: ownerPassword });
  isError(t, unknown, 401, 'AUTHENTICATION_FAILED', 'Your username or password is incorrect');

  const missing = await anonymous.post('/fetch_api_key', { username: owner.email });
  isError(t, missing, 400, 'REQUEST_VARIABLE_MISSING');
  t.equal(missing.body.var_name, 'password');

  const user = await api.createUser('leaving@example.com', 'Leaving', PASSWORD);
  isSuccess(t, await api.delete(`/users/${user.userId}`), 'deactivate the user');
  const deactivated = await anonymous.post('/fetch_api_key', { username: user.email, password: PASSWORD });
  isError(t, deactivated, 401, 'USER_DEACTIVATED');
  t.equal(deactivated.body.api_key, undefined, 'a deactivated user gets no key');
});

t.test('POST /fetch_api_key is limited to 5 failures per username', async (t) => {
  const { api, owner, ownerPassword } = await startTestServer(t);
  const anonymous = api.as(null);
  const mia = await api.createUser('mia@example.com', 'Mia', PASSWORD);

  for (let attempt = 1; attempt <= 5; attempt++) {
    const failed = await anonymous.post('/fetch_api_key', { username: mia.email, password: `wrong-Passw0rd-${attempt}` });
    isError(t, failed, 401, 'AUTHENTICATION_FAILED');
  }
  const limited = await anonymous.post('/fetch_api_key', { username: mia.email, password: PASSWORD });
  isError(t, limited, 429, 'RATE_LIMIT_HIT');
  t.type(limited.body['retry-after'], 'number', 'retry-after field is a number');
  t.ok(limited.body['retry-after'] > 0, `retry-after is positive (${limited.body['retry-after']})`);
  t.equal(limited.body.api_key, undefined, 'no key while limited, even with the right password');
  t.match(header(limited, 'Retry-After'), /^\d+(\.\d+)?$/, 'Retry-After header');

  isError(t, await anonymous.post('/fetch_api_key', { username: 'MIA@example.com', password: PASSWORD }), 429, 'RATE_LIMIT_HIT');

  const other = await anonymous.post('/fetch_api_key', { username: owner.email, password: ownerPassword });
  isSuccess(t, other, 'another username is not limited');
  t.equal(other.body.api_key, owner.key);
  isSuccess(t, await api.as(mia).get('/users/me'), 'the limited user keeps API access with its key');
});

t.test('POST /fetch_api_key counts failures that run in parallel', async (t) => {
  const { api } = await startTestServer(t);
  const anonymous = api.as(null);
  const quinn = await api.createUser('quinn@example.com', 'Quinn', PASSWORD);

  // A password guesser does not wait for one answer before sending the next guess: the limit must hold
  // for attempts in flight together, not only for attempts made one after another.
  const attempts = await Promise.all(
    Array.from({ length: 12 }, (_, i) => anonymous.post('/fetch_api_key', { username: quinn.email, password: `guess-Passw0rd-${i}` })),
  );
  const codes = attempts.map((answer) => answer.body?.code);
  const failed = codes.filter((code) => code === 'AUTHENTICATION_FAILED').length;
  const limited = codes.filter((code) => code === 'RATE_LIMIT_HIT').length;
  t.equal(failed + limited, 12, 'every attempt was refused', { codes });
  t.ok(failed <= 5, `at most 5 passwords were checked (${failed} were)`);
  t.ok(limited >= 7, `the other attempts were rate limited (${limited} were)`);
  isError(t, await anonymous.post('/fetch_api_key', { username: quinn.email, password: PASSWORD }), 429, 'RATE_LIMIT_HIT');
});

t.test('POST /users/me/api_key/regenerate', async (t) => {
  const { api, ownerPassword, owner } = await startTestServer(t);
  const nick = await api.createUser('nick@example.com', 'Nick', PASSWORD);

  const regenerated = await api.as(nick).post('/users/me/api_key/regenerate');
  isSuccess(t, regenerated, 'regenerate');
  const newKey: string = regenerated.body.api_key;
  t.match(newKey, /^[A-Za-z0-9]{32}$/, 'a 32-character alphanumeric key');
  t.not(newKey, nick.key, 'a different key');

  isError(t, await api.as(nick).get('/users/me'), 401, 'UNAUTHORIZED', 'Invalid API key');
  const me = await api.as({ email: nick.email, key: newKey }).get('/users/me');
  isSuccess(t, me, 'the new key works');
  t.equal(me.body.user_id, nick.userId);

  const fetched = await api.as(null).post('/fetch_api_key', { username: nick.email, password: PASSWORD });
  t.equal(fetched.body.api_key, newKey, 'fetch_api_key hands out the new key');

  isSuccess(t, await api.get('/users/me'), "other users' keys are untouched");
  const ownerFetched = await api.as(null).post('/fetch_api_key', { username: owner.email, password: ownerPassword });
  t.equal(ownerFetched.body.api_key, owner.key);
});

t.test('a header that authenticated before stops working as soon as its key or its user changes (the credential cache)', async (t) => {
  const { api } = await startTestServer(t);
  const olga = await api.createUser('olga@example.com', 'Olga', PASSWORD);
  const { queueId } = await api.as(olga).register({ event_types: ['realm_user'] });
  const poll = (credentials: Credentials) => api.as(credentials).get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
  // The same header, many times: what a client's long-polls send.
  for (let i = 0; i < 3; i++) isSuccess(t, await poll(olga), `poll ${i + 1}`);

  isSuccess(t, await api.delete(`/users/${olga.userId}`), 'deactivated');
  isError(t, await poll(olga), 401, 'USER_DEACTIVATED');
  isSuccess(t, await api.post(`/users/${olga.userId}/reactivate`), 'reactivated');
  isSuccess(t, await poll(olga), 'the same header works again');

  const regenerated = await api.as(olga).post('/users/me/api_key/regenerate');
  isSuccess(t, regenerated, 'a new key');
  isError(t, await poll(olga), 401, 'UNAUTHORIZED', 'Invalid API key');
  isError(t, await api.as(olga).get('/users/me'), 401, 'UNAUTHORIZED', 'Invalid API key');
  const renewed = { email: olga.email, key: regenerated.body.api_key as string };
  isSuccess(t, await poll(renewed), 'the new key polls');
  isSuccess(t, await poll(renewed), 'again');
  isError(t, await poll(olga), 401, 'UNAUTHORIZED', 'Invalid API key');

  // Another user's header never stands for this one, whatever was seen before.
  const pia = await api.createUser('pia@example.com', 'Pia', PASSWORD);
  isSuccess(t, await api.as(pia).get('/users/me'), 'pia');
  isError(t, await api.as({ email: pia.email, key: renewed.key }).get('/users/me'), 401, 'UNAUTHORIZED', 'Invalid API key');
  isError(t, await api.as({ email: olga.email, key: pia.key }).get('/users/me'), 401, 'UNAUTHORIZED', 'Invalid API key');

  // The organization closes: a header taken a moment before is refused at once.
  isSuccess(t, await poll(renewed), 'polls while the organization is open');
  isSuccess(t, await api.post('/realm/deactivate'), 'the organization is deactivated');
  isError(t, await poll(renewed), 401, 'REALM_DEACTIVATED');
});

t.test('GET /server_settings needs no authentication', async (t) => {
  const { api, url } = await startTestServer(t);
  const settings = await api.as(null).get('/server_settings');
  isSuccess(t, settings, 'server_settings');
  const body = settings.body;
  t.equal(body.svc_feature_level, 420, 'feature level');
  t.type(body.svc_version, 'string');
  t.ok(body.svc_version.length > 0, 'svc_version is not empty');
  t.type(body.svc_merge_base, 'string');
  t.equal(body.realm_url, url, 'realm_url is where the server is reached');
  t.type(body.realm_name, 'string');
  t.match(body.authentication_methods, { password: true, email: true }, 'password authentication is on');
  t.same(body.external_authentication_methods, [], 'no external authentication');
  t.equal(body.email_auth_enabled, true);
  t.equal(body.require_email_format_usernames, true);
  t.equal(body.push_notifications_enabled, false);
  t.equal(body.is_incompatible, false);
  t.type(body.realm_description, 'string');
  t.type(body.realm_web_public_access_enabled, 'boolean');
  for (const renamed of ['zulip_feature_level', 'zulip_version', 'zulip_merge_base']) {
    t.notOk(renamed in body, `no ${renamed}: the neutral name is used`);
  }

  const { body: registered } = await api.register({ fetch_event_types: ['realm'] });
  t.equal(body.realm_name, registered.realm_name, 'the same realm name as register');
  t.equal(body.realm_url, registered.realm_url, 'the same realm URL as register');
  t.equal(body.svc_version, registered.svc_version, 'the same version as register');
  t.equal(body.svc_merge_base, registered.svc_merge_base, 'the same merge base as register');
});

t.test('the per-user API rate limit', async (t) => {
  const { api } = await startTestServer(t, { rateLimit: { limit: 5, windowSeconds: 60 } });
  // Creating the user costs the owner one request (POST /users); fetch_api_key needs no credentials.
  const pat = await api.createUser('pat@example.com', 'Pat', PASSWORD);
  const asPat = api.as(pat);

  // Registering a queue through GET /events is a request like POST /register; polling it is not.
  const created = await asPat.get('/events', { dont_block: true, event_types: ['realm_user'] });
  isSuccess(t, created, 'request 1 registers a queue through GET /events');
  const queueId: string = created.body.queue_id;
  t.type(queueId, 'string', 'a queue was made');
  for (let request = 2; request <= 5; request++) isSuccess(t, await asPat.get('/users/me'), `request ${request}`);
  const limited = await asPat.get('/users/me');
  isError(t, limited, 429, 'RATE_LIMIT_HIT', 'API usage exceeded rate limit');
  const retryAfter = limited.body['retry-after'];
  t.type(retryAfter, 'number', 'retry-after field is a number');
  t.ok(retryAfter > 0 && retryAfter <= 60, `retry-after within the window (${retryAfter})`);
  const headerValue = header(limited, 'Retry-After');
  t.match(headerValue, /^\d+$/, 'Retry-After header in whole seconds');
  t.ok(Number(headerValue) >= 1, 'Retry-After header is at least 1');
  isError(t, await asPat.post('/users/me/api_key/regenerate'), 429, 'RATE_LIMIT_HIT');

  isSuccess(t, await api.get('/users/me'), 'another user is not limited');

  isError(t, await asPat.get('/events', { dont_block: true, event_types: ['realm_user'] }), 429, 'RATE_LIMIT_HIT');
  for (let poll = 1; poll <= 6; poll++) {
    const polled = await asPat.get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
    isSuccess(t, polled, `poll ${poll} while limited`);
  }
  isError(t, await asPat.get('/users/me'), 429, 'RATE_LIMIT_HIT');
});
