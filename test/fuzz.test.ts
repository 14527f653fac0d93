import { request as httpRequest } from 'node:http';
import t from 'tap';
import { random } from './helpers/random.ts';
import { allRoutes } from '../src/routes/index.ts';
import { OWNER_PASSWORD, startTestServer, type Credentials } from './helpers/server.ts';

/**
 * Throws malformed requests at every route of the API: bad JSON where JSON goes, values of the wrong type,
 * 1 MB strings, null bytes and odd unicode, negative and huge numbers, arrays for objects and objects for
 * arrays, unknown parameters, wrong and broken content types, broken multipart bodies, missing and garbage
 * credentials, path parameters that are not numbers, garbage query strings. Every answer must be a JSON
 * envelope (result 'error' or 'success'), never a 500 and never a dropped connection, and the server must
 * still answer GET /health at the end. Deterministic: the seed fixes every case (FUZZ_SEED to try others).
 */

const SEED = Number(process.env.FUZZ_SEED ?? 8_2026);
/** Passes over the route table, each with new cases: CI makes one; bench/soak.ts makes many. */
const ROUNDS = Number(process.env.FUZZ_ROUNDS ?? 1);
const MEGABYTE = 'x'.repeat(1024 * 1024);

/** Values of every wrong shape, as the form text a client would send. */
const BAD_VALUES = [
  '', ' ', '{[', '[', '{"a":', 'null', 'true', 'false', '0', '-1', '-0', '1.5', '1e309', '-1e309', 'NaN', 'Infinity',
  '9007199254740993', '-9007199254740993', '99999999999999999999999999', '0x10', '[]', '{}', '[[]]', '[{}]', '{"a":[1,2]}',
  '[1,"a",null,{},[]]', '["a"]', '[-1]', '[1e400]', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{}}}',
  '"just a string"', 'a\u0000b', '\u0000', '😀\u202e𝕏\uFFFF', '\uD800', '%00', '../../etc/passwd', '<script>alert(1)</script>',
  '*'.repeat(300), 'general', 'true,false', '1,2,3', '[{"operator":"channel","operand":[1]}]', '[{"operator":null}]',
  '[["stream"]]', '{"operator":"is","operand":"dm"}', '[{"stream_id":"x","property":"color","value":{}}]',
];

/** Plausible values, so that a request gets past the first check into deeper ones. */
const PLAUSIBLE_VALUES = [
  '1', '2', '3', '5', 'true', 'false', 'fuzz', 'newest', 'oldest', 'first_unread', 'add', 'remove', 'read', 'starred', 'stream',
  'channel', 'direct', 'private', 'smile', 'color', '[2]', '[1,2]', '[3,2,1]', '["fuzz"]', '[{"name":"fuzz"}]', '{"name":"fuzz"}',
  '[{"operator":"channel","operand":"fuzz"}]', '[{"operator":"search","operand":"message"}]', '[{"stream_id":1,"property":"color","value":"#ff0000"}]',
  '["fuzz@example.com"]', 'fuzz0@example.com', '#00ff00', '2030-01-01', '1900000000', 'unlimited', 'forever',
];

const BAD_PATH_VALUES = ['abc', '-1', '0', '1.5', '99999999999999999999', '%00', '..%2F..', '%F0%9F%98%80', 'null', '1e3', ' 1', '0x1', '%ZZ'];

interface Case {
  method: string;
  path: string;
  query?: string;
  body?: Buffer | string;
  contentType?: string;
  authorization?: string;
  label: string;
}

/**
 * Pages people open in a browser (an invitation's link) answer in HTML, their own errors included; what the
 * shared pipeline refuses before the page (an unreadable body) is a JSON envelope as everywhere. Never a 500.
 */
const HTML_PAGES = new Set(['GET /join/{key}', 'POST /join/{key}']);

/** Data files the API document describes as bare JSON (the registration's `server_emoji_data_url`), with their one key. */
const DATA_FILES = new Map([['GET /emoji-data.json', 'code_to_names']]);

interface Outcome {
  status: number;
  text: string;
}

function send(baseUrl: string, fuzz: Case): Promise<Outcome> {
  const url = new URL(baseUrl);
  const headers: Record<string, string> = {};
  if (fuzz.authorization !== undefined) headers.Authorization = fuzz.authorization;
  if (fuzz.contentType !== undefined) headers['Content-Type'] = fuzz.contentType;
  const body = fuzz.body === undefined ? undefined : Buffer.from(fuzz.body);
  if (body) headers['Content-Length'] = String(body.length);
  const target = fuzz.path + (fuzz.query ? `?${fuzz.query}` : '');
  return new Promise((resolve, reject) => {
    const req = httpRequest({ hostname: url.hostname, port: url.port, path: target, method: fuzz.method, headers, timeout: 30_000 }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      response.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('no answer in 30 s')));
    req.on('error', reject);
    req.end(body);
  });
}

const basic = (email: string, key: string) => `Basic ${Buffer.from(`${email}:${key}`).toString('base64')}`;
const form = (values: Record<string, string>) => new URLSearchParams(values).toString();

/** The cases for one route, drawn from the generator. */
function casesFor(route: (typeof allRoutes)[number], next: () => number, auth: () => string): Case[] {
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!;
  const names = Object.keys(route.params).filter((name) => !route.path.includes(`{${name}}`));
  const base = route.root ? '' : '/api/v1';
  const fill = (values: () => string) => base + route.path.replace(/\{(\w+)\}/g, () => encodeURIComponent(values()).replace(/%25/g, '%'));
  const goodPath = () => fill(() => String(2 + Math.floor(next() * 5)));
  const badPath = () => fill(() => pick(BAD_PATH_VALUES));
  const isGet = route.method === 'GET';
  /** Parameters in the query for GET, in a form body otherwise. */
  const withParams = (values: Record<string, string>, label: string, extra: Partial<Case> = {}): Case =>
    isGet
      ? { method: route.method, path: goodPath(), query: form(values), authorization: auth(), label, ...extra }
      : { method: route.method, path: goodPath(), body: form(values), contentType: 'application/x-www-form-urlencoded', authorization: auth(), label, ...extra };
  const cases: Case[] = [];
  for (let i = 0; i < 5; i++) {
    const values: Record<string, string> = {};
    for (const name of names) if (next() < 0.8) values[name] = next() < 0.5 ? pick(BAD_VALUES) : pick(PLAUSIBLE_VALUES);
    values[`unknown_${Math.floor(next() * 1000)}`] = pick(BAD_VALUES);
    cases.push(withParams(values, `wrong values ${JSON.stringify(values).slice(0, 120)}`));
  }
  cases.push({ method: route.method, path: badPath(), authorization: auth(), label: 'path parameters that are not numbers' });
  cases.push({ method: route.method, path: badPath(), authorization: auth(), label: 'path parameters that are not numbers' });
  const huge: Record<string, string> = {};
  for (const name of names.slice(0, 2)) huge[name] = MEGABYTE;
  if (!isGet) cases.push(withParams(Object.keys(huge).length === 0 ? { huge: MEGABYTE } : huge, '1 MB strings'));
  const odd: Record<string, string> = {};
  for (const name of names) odd[name] = pick(['a\u0000b', '😀\u202e𝕏', '\u0000', '%00', '\uFFFE', 'é'.repeat(1000)]);
  cases.push(withParams(odd, 'null bytes and odd unicode'));
  const body = JSON.stringify(Object.fromEntries(names.map((name) => [name, pick([[1, 2], { a: 1 }, null, 'x', -1])])));
  for (const [contentType, raw] of [
    ['application/json', body],
    ['text/plain', 'just text'],
    ['multipart/form-data', 'no boundary given'],
    ['multipart/form-data; boundary=zz', '--zz\r\nContent-Disposition: form-data; name="a"\r\n\r\nunterminated'],
    ['multipart/form-data; boundary=zz', `--zz\r\nContent-Disposition: form-data; name="${names[0] ?? 'file'}"; filename="f.txt"\r\n\r\n${'y'.repeat(5000)}\r\n--zz--\r\n`],
    ['application/x-www-form-urlencoded', '%ZZ=%%&&==&a[]=1&=&%E0%A4%A=x'],
    ['application/x-www-form-urlencoded; charset=utf-16', form({ [names[0] ?? 'a']: '1' })],
  ] as const) {
    cases.push({ method: route.method, path: goodPath(), body: raw, contentType, authorization: auth(), label: `content type ${contentType}` });
  }
  for (const authorization of [
    undefined, '', 'Basic', 'Basic !!!!', `Basic ${Buffer.from('no-colon').toString('base64')}`, 'Bearer abc',
    basic('owner@example.com', 'A'.repeat(32)), basic('\u0000@x', 'k'), `Basic ${'A'.repeat(20_000)}`,
  ]) {
    cases.push({ method: route.method, path: goodPath(), authorization, label: `credentials ${JSON.stringify(authorization)?.slice(0, 40)}` });
  }
  if (isGet) cases.push({ method: route.method, path: goodPath(), query: '%ZZ&&==&narrow=%7B&anchor[]=1&a=%00', authorization: auth(), label: 'garbage query string' });
  return cases;
}

t.test('fuzz: every route answers malformed requests with a JSON envelope and the server stays up', async (t) => {
  const server = await startTestServer(t, { rateLimit: null });
  const { api, owner } = server;
  // Something for ids to name: users, a channel, messages, a draft, a group.
  for (let i = 0; i < 4; i++) await api.createUser(`fuzz${i}@example.com`);
  await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'fuzz' }] });
  for (let i = 0; i < 5; i++) await api.post('/messages', { type: 'stream', to: 'fuzz', topic: 'fuzz', content: `message ${i}` });
  await api.post('/drafts', { drafts: [{ type: '', to: [], topic: '', content: 'draft' }] });

  let credentials: Credentials = owner;
  const auth = () => basic(credentials.email, credentials.key);
  const next = random(SEED);
  const failures: string[] = [];
  let cases = 0;
  const byStatus = new Map<number, number>();
  const started = performance.now();
  // Closing the organization is for good: every later case would only be refused (test/api-operations.test.ts covers it).
  const fuzzed = allRoutes.filter((route) => !(route.method === 'POST' && route.path === '/realm/deactivate'));
  for (const route of Array.from({ length: ROUNDS }, () => fuzzed).flat()) {
    for (const fuzz of casesFor(route, next, auth)) {
      cases++;
      const where = `${route.method} ${route.path} (${fuzz.label})`;
      let outcome: Outcome;
      try {
        outcome = await send(server.url, fuzz);
      } catch (error) {
        failures.push(`${where}: no answer (${error instanceof Error ? error.message : String(error)})`);
        continue;
      }
      byStatus.set(outcome.status, (byStatus.get(outcome.status) ?? 0) + 1);
      let body: { result?: unknown; code?: unknown } | null = null;
      try {
        body = JSON.parse(outcome.text);
      } catch {
        // not JSON
      }
      if (outcome.status >= 500) failures.push(`${where}: HTTP ${outcome.status} ${outcome.text.slice(0, 200)}`);
      else if (HTML_PAGES.has(`${route.method} ${route.path}`) && outcome.text.startsWith('<!doctype html>')) continue;
      // GET /avatar/{user} answers a found user with a redirect to the picture, which has no body to be an envelope.
      else if (outcome.status === 302 && route.path.startsWith('/avatar/')) continue;
      else if (outcome.status === 200 && body && DATA_FILES.get(`${route.method} ${route.path}`) === Object.keys(body).join()) continue;
      else if (!body || (body.result !== 'success' && body.result !== 'error')) failures.push(`${where}: not a JSON envelope: ${outcome.text.slice(0, 200)}`);
      // A fuzzed call may have regenerated the key or changed the owner: log in again.
      if (outcome.status === 401 && fuzz.authorization === auth()) {
        const login = await api.as(null).post('/fetch_api_key', { username: credentials.email, password: OWNER_PASSWORD });
        if (login.status === 200) credentials = { email: credentials.email, key: login.body.api_key };
      }
    }
  }
  // Outside the route table: unknown paths and methods, odd paths, a long URL.
  for (const [method, path] of [['GET', '/api/v1/no/such/route'], ['OPTIONS', '/api/v1/users'], ['PUT', '/api/v1/users'], ['TRACE', '/api/v1/users'],
    ['GET', '/api/v1//users'], ['GET', '/api/v1/users/'], ['GET', '/api/v2/users'], ['GET', '/api/v1/%ZZ'], ['GET', `/api/v1/${'a'.repeat(10_000)}`],
    ['POST', '/api/v1/messages/%00'], ['DELETE', '/api/v1/'], ['GET', '/user_uploads/1/../../etc/passwd'], ['GET', '/accounts/confirm_new_email/%00']] as const) {
    cases++;
    const outcome = await send(server.url, { method, path, authorization: auth(), label: 'outside the table' }).catch((error: unknown) => ({ status: 0, text: String(error) }));
    let body: { result?: unknown } | null = null;
    try {
      body = JSON.parse(outcome.text);
    } catch {
      // not JSON
    }
    if (outcome.status >= 500 || outcome.status === 0 || !body || (body.result !== 'success' && body.result !== 'error')) {
      failures.push(`${method} ${path.slice(0, 60)}: HTTP ${outcome.status} ${outcome.text.slice(0, 200)}`);
    }
  }
  const health = await fetch(`${server.url}/health`);
  t.equal(health.status, 200, 'the server answers GET /health afterwards');
  t.equal((await api.as(credentials).get('/users/me')).status, 200, 'and serves the API');
  t.comment(`${cases} cases over ${allRoutes.length} routes in ${Math.round(performance.now() - started)} ms; statuses ${JSON.stringify(Object.fromEntries([...byStatus].sort()))}`);
  t.same(failures, [], 'every answer is a JSON envelope, none a 500, no connection dropped');
  t.ok(cases >= 1500 * ROUNDS, `at least ${1500 * ROUNDS} cases (${cases})`);
});
