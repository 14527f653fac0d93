import t, { type Test } from 'tap';
import { connect } from 'node:net';
import { startTestServer, type ApiResult, type Credentials } from './helpers/server.ts';

const PASSWORD = 'a-Strong-passw0rd-for-tests';

const basic = (credentials: Credentials) =>
  `Basic ${Buffer.from(`${credentials.email}:${credentials.key}`).toString('base64')}`;

/** A raw request, for what the ApiClient does not do on its own (query strings on PATCH/DELETE, multipart, odd paths). */
async function raw(url: string, init: RequestInit = {}): Promise<ApiResult> {
  const response = await fetch(url, init);
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: response.status, headers: response.headers, body };
}

/** The error envelope: result "error", a message, a code, and a JSON content type. */
function isErrorEnvelope(t: Test, result: ApiResult, status: number, what: string): void {
  t.equal(result.status, status, `${what}: status ${status}`);
  t.match(result.headers.get('content-type') ?? '', /^application\/json/, `${what}: JSON content type`);
  t.type(result.body, 'object', `${what}: a JSON object`);
  t.equal(result.body?.result, 'error', `${what}: result error`);
  t.type(result.body?.msg, 'string', `${what}: msg is a string`);
  t.ok(String(result.body?.msg ?? '').length > 0, `${what}: msg is not empty`);
  t.type(result.body?.code, 'string', `${what}: code is a string`);
}

function isSuccessEnvelope(t: Test, result: ApiResult, what: string): void {
  t.equal(result.status, 200, `${what}: status 200`);
  t.match(result.headers.get('content-type') ?? '', /^application\/json/, `${what}: JSON content type`);
  t.equal(result.body?.result, 'success', `${what}: result success`);
  t.equal(result.body?.msg, '', `${what}: msg is empty`);
}

t.test('POST parameters in a form-urlencoded body, GET parameters in the query string', async (t) => {
  const { api, url, owner } = await startTestServer(t);
  const body = new URLSearchParams({ email: 'form@example.com', password: PASSWORD, full_name: 'Form User' }).toString();
  const created = await raw(`${url}/api/v1/users`, {
    method: 'POST',
    headers: { Authorization: basic(owner), 'Content-Type': 'application/x-www-form-urlencoded' },
    body,
  });
  isSuccessEnvelope(t, created, 'POST /users (urlencoded)');
  t.type(created.body.user_id, 'number');

  const all = await api.get('/users');
  t.ok(all.body.members.length >= 2, 'the realm has the owner and the new user');
  const one = await raw(`${url}/api/v1/users?user_ids=${encodeURIComponent(JSON.stringify([created.body.user_id]))}`, {
    headers: { Authorization: basic(owner) },
  });
  isSuccessEnvelope(t, one, 'GET /users?user_ids=');
  t.same(
    one.body.members.map((member: { email: string }) => member.email),
    ['form@example.com'],
    'the query-string parameter was read',
  );
});

t.test('PATCH and DELETE parameters in the query string', async (t) => {
  const { api, url, owner } = await startTestServer(t);
  const user = await api.createUser('patched@example.com', 'Before');

  const patched = await raw(`${url}/api/v1/users/${user.userId}?full_name=${encodeURIComponent('After Patch')}`, {
    method: 'PATCH',
    headers: { Authorization: basic(owner) },
  });
  isSuccessEnvelope(t, patched, 'PATCH /users/{id}?full_name=');
  const fetched = await api.get(`/users/${user.userId}`);
  t.equal(fetched.body.user.full_name, 'After Patch', 'the query-string full_name was applied');

  const { queueId } = await api.register();
  const deleted = await raw(`${url}/api/v1/events?queue_id=${encodeURIComponent(queueId)}`, {
    method: 'DELETE',
    headers: { Authorization: basic(owner) },
  });
  isSuccessEnvelope(t, deleted, 'DELETE /events?queue_id=');
  const gone = await api.get('/events', { queue_id: queueId, last_event_id: -1, dont_block: 'true' });
  t.equal(gone.body.code, 'BAD_EVENT_QUEUE_ID', 'the queue named in the query string was deleted');
});

t.test('multipart/form-data bodies', async (t) => {
  const { api, url, owner } = await startTestServer(t);
  const form = new FormData();
  form.append('email', 'multipart@example.com');
  form.append('password', PASSWORD);
  form.append('full_name', 'Multi Part');
  const created = await raw(`${url}/api/v1/users`, { method: 'POST', headers: { Authorization: basic(owner) }, body: form });
  isSuccessEnvelope(t, created, 'POST /users (multipart)');
  t.type(created.body.user_id, 'number');
  const fetched = await api.get(`/users/${created.body.user_id}`);
  t.equal(fetched.body.user.email, 'multipart@example.com');
  t.equal(fetched.body.user.full_name, 'Multi Part');

  const login = new FormData();
  login.append('username', 'multipart@example.com');
  login.append('password', PASSWORD);
  const key = await raw(`${url}/api/v1/fetch_api_key`, { method: 'POST', body: login });
  isSuccessEnvelope(t, key, 'POST /fetch_api_key (multipart)');
  t.match(key.body.api_key, /^[A-Za-z0-9]{32}$/);
  t.equal(key.body.user_id, created.body.user_id);

  const listForm = new FormData();
  listForm.append('fetch_event_types', '["realm"]');
  const registered = await raw(`${url}/api/v1/register`, { method: 'POST', headers: { Authorization: basic(owner) }, body: listForm });
  isSuccessEnvelope(t, registered, 'POST /register (multipart)');
  t.notOk('realm_users' in registered.body, 'the multipart JSON list was read');
  t.equal(registered.body.max_message_length, 10000);
});

t.test('list parameters as JSON text', async (t) => {
  const { api } = await startTestServer(t);
  const users = await api.post('/register', { event_types: '["realm_user"]' });
  isSuccessEnvelope(t, users, 'register event_types=["realm_user"]');
  t.ok(Array.isArray(users.body.realm_users), 'fetch types fall back to event_types: realm_users present');
  t.notOk('max_message_length' in users.body, 'realm data was not asked for');

  const realm = await api.post('/register', { fetch_event_types: '["realm"]' });
  isSuccessEnvelope(t, realm, 'register fetch_event_types=["realm"]');
  t.notOk('realm_users' in realm.body);
  t.equal(realm.body.max_message_length, 10000);

  const bad = await api.post('/register', { event_types: '["realm_user"' });
  isErrorEnvelope(t, bad, 400, 'bad JSON');
  t.equal(bad.body.code, 'BAD_REQUEST');
  t.equal(bad.body.msg, '"event_types" is not valid JSON.');

  const badFetch = await api.post('/register', { fetch_event_types: 'realm' });
  isErrorEnvelope(t, badFetch, 400, 'bare word for a list');
  t.equal(badFetch.body.msg, '"fetch_event_types" is not valid JSON.');

  // zulip-js sends the string "null" for "every type".
  const nullTypes = await api.post('/register', { event_types: 'null' });
  isSuccessEnvelope(t, nullTypes, 'register event_types=null');
  t.ok(Array.isArray(nullTypes.body.realm_users), 'null: every fetch type');
  t.equal(nullTypes.body.max_message_length, 10000);
});

t.test('booleans and integers as text; wrong types name the parameter', async (t) => {
  const { api } = await startTestServer(t);
  const { queueId } = await api.register();

  const yes = await api.get('/events', { queue_id: queueId, last_event_id: '-1', dont_block: 'true' });
  isSuccessEnvelope(t, yes, 'dont_block=true');
  t.same(yes.body.events, []);

  const no = await api.post('/register', { apply_markdown: 'false', include_subscribers: 'true', fetch_event_types: '["realm"]' });
  isSuccessEnvelope(t, no, 'string booleans on register');

  const maybe = await api.post('/register', { apply_markdown: 'maybe' });
  isErrorEnvelope(t, maybe, 400, 'apply_markdown=maybe');
  t.equal(maybe.body.code, 'BAD_REQUEST');
  t.match(maybe.body.msg, /apply_markdown/, 'the message names the parameter');

  const dontBlock = await api.get('/events', { queue_id: queueId, last_event_id: '-1', dont_block: 'maybe' });
  isErrorEnvelope(t, dontBlock, 400, 'dont_block=maybe');
  t.match(dontBlock.body.msg, /dont_block/);

  const lastEvent = await api.get('/events', { queue_id: queueId, last_event_id: 'abc', dont_block: 'true' });
  isErrorEnvelope(t, lastEvent, 400, 'last_event_id=abc');
  t.equal(lastEvent.body.code, 'BAD_REQUEST');
  t.match(lastEvent.body.msg, /last_event_id/);

  const timeout = await api.post('/register', { idle_queue_timeout: 'abc' });
  isErrorEnvelope(t, timeout, 400, 'idle_queue_timeout=abc');
  t.match(timeout.body.msg, /idle_queue_timeout/);

  const pathParam = await api.delete('/users/abc');
  isErrorEnvelope(t, pathParam, 400, 'DELETE /users/abc');
  t.equal(pathParam.body.code, 'BAD_REQUEST');
  t.match(pathParam.body.msg, /user_id/, 'the message names the path parameter');

  const reactivate = await api.post('/users/abc/reactivate');
  isErrorEnvelope(t, reactivate, 400, 'POST /users/abc/reactivate');
  t.match(reactivate.body.msg, /user_id/);
});

t.test('a missing required parameter', async (t) => {
  const { api } = await startTestServer(t);
  const noName = await api.post('/users', { email: 'missing@example.com', password: PASSWORD });
  isErrorEnvelope(t, noName, 400, 'POST /users without full_name');
  t.same(noName.body, {
    result: 'error',
    msg: "Missing 'full_name' argument",
    code: 'REQUEST_VARIABLE_MISSING',
    var_name: 'full_name',
  });

  const noPassword = await api.as(null).post('/fetch_api_key', { username: 'someone@example.com' });
  isErrorEnvelope(t, noPassword, 400, 'POST /fetch_api_key without password');
  t.equal(noPassword.body.code, 'REQUEST_VARIABLE_MISSING');
  t.equal(noPassword.body.msg, "Missing 'password' argument");
  t.equal(noPassword.body.var_name, 'password');

  const noQueue = await api.delete('/events');
  isErrorEnvelope(t, noQueue, 400, 'DELETE /events without queue_id');
  t.equal(noQueue.body.code, 'REQUEST_VARIABLE_MISSING');
  t.equal(noQueue.body.var_name, 'queue_id');
});

t.test('unknown parameters are reported in ignored_parameters_unsupported', async (t) => {
  const { api } = await startTestServer(t);

  const known = await api.get('/users/me');
  isSuccessEnvelope(t, known, 'GET /users/me');
  t.notOk('ignored_parameters_unsupported' in known.body, 'absent when every parameter is known');

  const unknown = await api.get('/users/me', { frobnicate: 'yes' });
  isSuccessEnvelope(t, unknown, 'GET /users/me?frobnicate=');
  t.same(unknown.body.ignored_parameters_unsupported, ['frobnicate']);
  t.equal(unknown.body.email, known.body.email, 'the operation still ran');

  const registered = await api.post('/register', { fetch_event_types: '["realm"]', wibble: '1', wobble: '2' });
  isSuccessEnvelope(t, registered, 'POST /register with unknown parameters');
  t.same([...registered.body.ignored_parameters_unsupported].sort(), ['wibble', 'wobble']);
  t.match(registered.body.queue_id, /^[0-9a-f-]{36}$/);

  const plain = await api.post('/register', { fetch_event_types: '["realm"]' });
  t.notOk('ignored_parameters_unsupported' in plain.body, 'absent on register when every parameter is known');

  // GET /events builds its body from pre-serialized events: the key must be there too.
  const events = await api.get('/events', { queue_id: plain.body.queue_id, last_event_id: -1, dont_block: 'true', extra_thing: 'x' });
  isSuccessEnvelope(t, events, 'GET /events with an unknown parameter');
  t.same(events.body.ignored_parameters_unsupported, ['extra_thing']);
  t.same(events.body.events, []);
  const eventsKnown = await api.get('/events', { queue_id: plain.body.queue_id, last_event_id: -1, dont_block: 'true' });
  isSuccessEnvelope(t, eventsKnown, 'GET /events');
  t.notOk('ignored_parameters_unsupported' in eventsKnown.body, 'absent on GET /events when every parameter is known');
});

t.test('every response is a JSON envelope', async (t) => {
  const { api, owner } = await startTestServer(t);
  const { queueId } = await api.register();

  for (const [what, result] of [
    ['GET /users/me', await api.get('/users/me')],
    ['GET /users', await api.get('/users')],
    ['POST /register', await api.post('/register', { fetch_event_types: '[]' })],
    ['GET /events', await api.get('/events', { queue_id: queueId, last_event_id: -1, dont_block: 'true' })],
    ['GET /server_settings', await api.as(null).get('/server_settings')],
    ['POST /fetch_api_key', await api.as(null).post('/fetch_api_key', { username: owner.email, password: 'test-owner-Passw0rd-long' })],
  ] as const) {
    isSuccessEnvelope(t, result, what);
  }

  for (const [what, status, result] of [
    ['no credentials', 401, await api.as(null).get('/users/me')],
    ['wrong API key', 401, await api.as({ email: owner.email, key: 'x'.repeat(32) }).get('/users/me')],
    ['unknown user', 400, await api.get('/users/999999')],
    ['bad queue', 400, await api.get('/events', { queue_id: 'nope', last_event_id: -1 })],
    ['wrong password', 401, await api.as(null).post('/fetch_api_key', { username: owner.email, password: 'not-the-password' })],
  ] as const) {
    isErrorEnvelope(t, result, status, what);
  }
});

t.test('unknown routes and wrong methods', async (t) => {
  const { url, owner } = await startTestServer(t);
  const auth = { Authorization: basic(owner) };

  const unknownApi = await raw(`${url}/api/v1/no/such/route`, { headers: auth });
  isErrorEnvelope(t, unknownApi, 404, 'unknown route under /api/v1');

  const unknownApiNoAuth = await raw(`${url}/api/v1/nonexistent`);
  isErrorEnvelope(t, unknownApiNoAuth, 404, 'unknown route under /api/v1 without credentials');

  const outside = await raw(`${url}/definitely/not/api`);
  isErrorEnvelope(t, outside, 404, 'a path outside /api/v1');

  // The root path is the web client's page (test/web.test.ts); everything else outside /api/v1 is a 404 envelope.
  const root = await raw(`${url}/`);
  t.equal(root.status, 200, 'the root path serves the web client');
  t.match(root.headers.get('content-type'), /^text\/html/, 'the root path is HTML');

  const wrongMethod = await raw(`${url}/api/v1/register`, { method: 'PUT', headers: auth });
  isErrorEnvelope(t, wrongMethod, 405, 'PUT /register');
  t.match(wrongMethod.headers.get('allow') ?? '', /\bPOST\b/, 'Allow names POST');
  t.notMatch(wrongMethod.headers.get('allow') ?? '', /\bPUT\b/, 'Allow does not name PUT');

  const getRegister = await raw(`${url}/api/v1/register`, { headers: auth });
  isErrorEnvelope(t, getRegister, 405, 'GET /register');
  t.equal(getRegister.headers.get('allow'), 'POST');

  const eventsPost = await raw(`${url}/api/v1/events`, { method: 'POST', headers: auth });
  isErrorEnvelope(t, eventsPost, 405, 'POST /events');
  const allowed = (eventsPost.headers.get('allow') ?? '').split(',').map((method) => method.trim()).sort();
  t.same(allowed, ['DELETE', 'GET'], 'Allow lists the methods of /events');
});

t.test('a body bigger than the cap', async (t) => {
  const { api, url, owner } = await startTestServer(t, { maxBodyBytes: 1024 });

  const small = await api.post('/users', { email: 'small@example.com', password: PASSWORD, full_name: 'Small Body' });
  isSuccessEnvelope(t, small, 'a body under the cap');

  const big = 'full_name=' + 'x'.repeat(64 * 1024) + `&email=big%40example.com&password=${PASSWORD}`;
  let tooLarge: ApiResult | null = null;
  let failure: unknown = null;
  try {
    tooLarge = await raw(`${url}/api/v1/users`, {
      method: 'POST',
      headers: { Authorization: basic(owner), 'Content-Type': 'application/x-www-form-urlencoded' },
      body: big,
    });
  } catch (error) {
    failure = error;
  }
  t.equal(failure, null, 'the client got an answer, not a broken connection');
  if (tooLarge) {
    isErrorEnvelope(t, tooLarge, 413, 'a 64 KiB body');
  }

  const after = await api.get('/users/me');
  isSuccessEnvelope(t, after, 'the next request');
  t.equal(after.body.email, owner.email);
  const users = await api.get('/users');
  t.notOk(
    users.body.members.some((member: { email: string }) => member.email === 'big@example.com'),
    'the oversized request did nothing',
  );
  const postAfter = await api.post('/users', { email: 'after@example.com', password: PASSWORD, full_name: 'After Big' });
  isSuccessEnvelope(t, postAfter, 'a POST after the oversized one');
});

/**
 * What the server writes back on one connection for the bytes given. The client hangs up, as a proxy would,
 * once it has a whole answer saying `Connection: close`; otherwise it waits until the server closes the
 * connection or stays silent for 3 s (a server that keeps the connection open has answered all it will).
 */
function exchange(url: string, bytes: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    let text = '';
    const socket = connect({ host: hostname, port: Number(port) }, () => socket.write(bytes));
    socket.setTimeout(3000, () => socket.end());
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      const length = /^content-length: *(\d+)/im.exec(text.slice(0, end));
      const whole = end >= 0 && length !== null && text.length >= end + 4 + Number(length[1]);
      if (whole && /^connection: *close/im.test(text.slice(0, end))) socket.end();
    });
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
  });
}

const statusLines = (text: string) => text.match(/^HTTP\/1\.1 \d+/gm) ?? [];

t.test('a request whose length is ambiguous is refused, so no second request can hide in its body', async (t) => {
  const { url } = await startTestServer(t);
  // uWS reads the first Content-Length; behind a proxy that reads the last, the rest of the body would be
  // taken for a request of its own that the proxy never saw: request smuggling.
  const form = 'username=x&password=y';
  const body = `${form}GET /api/v1/server_settings HTTP/1.1\r\nHost: localhost\r\n\r\n`;
  const head = 'POST /api/v1/fetch_api_key HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\n';
  for (const [what, lengths] of [
    ['two different Content-Length headers', `Content-Length: ${form.length}\r\nContent-Length: ${body.length}\r\n`],
    ['the same Content-Length twice', `Content-Length: ${form.length}\r\nContent-Length: ${form.length}\r\n`],
  ]) {
    const answer = await exchange(url, `${head}${lengths}\r\n${body}`);
    t.same(statusLines(answer), ['HTTP/1.1 400'], `${what}: one answer, 400`, { answer });
    t.match(answer, /"code":"BAD_REQUEST"/, `${what}: the error envelope`);
  }
  const plain = await exchange(url, `${head}Content-Length: ${form.length}\r\nConnection: close\r\n\r\n${form}`);
  t.same(statusLines(plain), ['HTTP/1.1 401'], 'one Content-Length: the request is read', { answer: plain });
});
