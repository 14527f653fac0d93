import t from 'tap';
import { HostClient, type Answer } from './helpers/host-client.ts';
import { defaultConfig } from '../src/config.ts';
import { clientAddress, clientKey } from '../src/http/client-address.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

// Every 127.x.y.z is the loopback on Linux: each address below is a client of its own to the server.
const CLIENT_A = '127.0.0.2';
const CLIENT_B = '127.0.0.3';
const PASSWORD = 'a-Strong-passw0rd-for-tests';
/** what test servers get, as any server without settings */
const BUDGETS = defaultConfig().clientBudgets;

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

/** The default organization (any Host that is not a subdomain of the external host), as a client at `address`. */
const site = (server: TestServer, address: string) => new HostClient(server.url, 'localhost', null, address);

const login = (client: HostClient, username: string, password: string) => client.post('/fetch_api_key', { username, password });

function isRateLimited(t: Test, answer: Answer, what: string): void {
  t.equal(answer.status, 429, `${what}: HTTP 429`, { body: answer.body });
  t.equal(answer.body?.code, 'RATE_LIMIT_HIT', `${what}: RATE_LIMIT_HIT`);
  t.ok(answer.body?.['retry-after'] > 0, `${what}: retry-after in the body (${answer.body?.['retry-after']})`);
  t.match(answer.headers['retry-after'], /^\d+$/, `${what}: Retry-After header`);
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5));
}

t.test('failed logins lock out the client that guessed, not the account: its owner still logs in from elsewhere', async (t) => {
  const server = await startTestServer(t);
  const mia = await server.api.createUser('mia@example.com', 'Mia', PASSWORD);
  const guesser = site(server, CLIENT_A);

  for (let attempt = 1; attempt <= 5; attempt++) {
    t.equal((await login(guesser, mia.email, `wrong-Passw0rd-${attempt}`)).status, 401, `guess ${attempt} is checked and wrong`);
  }
  isRateLimited(t, await login(guesser, mia.email, PASSWORD), "the guesser's sixth attempt, even with the right password");

  const owner = await login(site(server, CLIENT_B), mia.email, PASSWORD);
  t.equal(owner.status, 200, 'the right password from a client that has not failed works', { body: owner.body });
  t.equal(owner.body.api_key, mia.key, "and gives the account's key");
  t.equal((await login(site(server, CLIENT_B), mia.email, 'wrong-Passw0rd-b')).status, 401, 'that client has its own allowance of failures');
});

t.test('a client guessing over many usernames is limited, whatever the usernames', async (t) => {
  const server = await startTestServer(t);
  const guesser = site(server, CLIENT_A);
  const limit = BUDGETS.loginFailures.limit;

  // A few guesses each on many usernames stay under each username's allowance (5): only the client's counts.
  const answers: Answer[] = [];
  for (let attempt = 0; attempt < limit + 2; attempt++) {
    answers.push(await login(guesser, `user${Math.floor(attempt / 2)}@example.com`, `guess-Passw0rd-${attempt}`));
  }
  t.same(answers.slice(0, limit).map((answer) => answer.status), Array(limit).fill(401), `the first ${limit} guesses are checked`);
  isRateLimited(t, answers[limit]!, `guess ${limit + 1}`);
  isRateLimited(t, await login(guesser, server.owner.email, server.ownerPassword), 'the guesser, on an account it never tried');
  t.equal((await login(site(server, CLIENT_B), server.owner.email, server.ownerPassword)).status, 200, 'another client logs in');
});

t.test('guesses spread over many clients and usernames meet one server-wide budget', async (t) => {
  const server = await startTestServer(t, {
    clientBudgets: { ...BUDGETS, costly: { limit: 30, windowSeconds: 3600 } },
  });
  // 10 clients, each guessing 3 usernames once: under every per-client and per-username allowance.
  for (let client = 0; client < 10; client++) {
    const guesser = site(server, `127.0.2.${client + 1}`);
    for (let user = 0; user < 3; user++) {
      t.equal((await login(guesser, `target${client}-${user}@example.com`, 'guess-Passw0rd')).status, 401, `client ${client}, username ${user}`);
    }
  }
  isRateLimited(t, await login(site(server, '127.0.2.99'), 'fresh@example.com', 'guess-Passw0rd'), 'a fresh client on a fresh username past the budget');
  t.equal((await server.api.get('/users/me')).status, 200, 'users with credentials are not held up');
});

t.test('requests without credentials are limited per client address', async (t) => {
  const server = await startTestServer(t);
  const limit = BUDGETS.anonymous!.limit;
  const client = site(server, CLIENT_A);
  const answers = await Promise.all(Array.from({ length: limit + 5 }, () => client.get('/server_settings')));
  t.equal(answers.filter((answer) => answer.status === 200).length, limit, `${limit} answered`);
  const refused = answers.filter((answer) => answer.status === 429);
  t.equal(refused.length, 5, 'the rest refused');
  isRateLimited(t, refused[0]!, 'over the budget');
  t.equal((await site(server, CLIENT_B).get('/server_settings')).status, 200, 'another client is not limited');
  t.equal((await server.api.get('/users/me')).status, 200, 'nor is a user with credentials');
});

t.test('a reusable invitation link makes a few accounts per client address', async (t) => {
  const server = await startTestServer(t);
  const link = await server.api.post('/invites/multiuse', { invite_expires_in_minutes: 60 });
  t.equal(link.status, 200, 'a reusable link', { body: link.body });
  const key = /\/join\/([^/]+)\/$/.exec(link.body.invite_link)![1]!;
  const limit = BUDGETS.linkJoins!.limit;
  const join = (client: HostClient, n: number, password = PASSWORD) =>
    client.post(`/invites/join/${key}`, { email: `joiner${n}@example.com`, full_name: `Joiner ${n}`, password });

  const joiner = site(server, CLIENT_A);
  t.equal((await join(joiner, 0, 'abc')).status, 400, 'a refused password makes no account');
  for (let n = 1; n <= limit; n++) t.equal((await join(joiner, n)).status, 200, `account ${n}`);
  isRateLimited(t, await join(joiner, limit + 1), `account ${limit + 1} from the same client`);
  t.equal((await join(site(server, CLIENT_B), limit + 2)).status, 200, 'another client still joins');
});

t.test('a login flood from many addresses waits in its own line: durable writes and uploads go on', async (t) => {
  // Durable acknowledgements (the default outside tests): a send waits for its commit and flush.
  const server = await startTestServer(t, { waitForFlush: true, passwordHashing: { concurrency: 1, queueLength: 32 } });
  const owner = new HostClient(server.url, 'localhost', server.owner);
  const FLOOD = 320;
  // 16 addresses x 20 guesses: within each client's allowance, so that the hashing line is what holds.
  const pending = new Set<number>();
  const flood = Array.from({ length: FLOOD }, (_, i) => {
    pending.add(i);
    return login(site(server, `127.0.1.${1 + (i % 16)}`), `nobody${i}@example.com`, `guess-Passw0rd-${i}`)
      .catch((error: Error): Answer => ({ status: 0, body: error.message, text: '', bytes: Buffer.alloc(0), headers: {}, sent: '' }))
      .finally(() => pending.delete(i));
  });
  await until(() => pending.size < FLOOD);

  const [sent, uploaded] = await Promise.all([
    owner.post('/messages', { type: 'direct', to: [server.owner.email], content: 'still here' }),
    owner.upload('note.txt', 'hello'),
  ]);
  const stillWaiting = new Set(pending);
  t.equal(sent.status, 200, 'the send succeeded', { body: sent.body });
  t.equal(uploaded.status, 200, 'the upload succeeded', { body: uploaded.body });

  const answers = await Promise.all(flood);
  const checked = answers.flatMap((answer, i) => (answer.status === 401 ? [i] : []));
  const refused = answers.filter((answer) => answer.status === 429);
  t.equal(checked.length + refused.length, FLOOD, 'every login was checked and failed, or refused');
  t.ok(refused.length > 0, `the line is bounded: ${refused.length} refused`);
  isRateLimited(t, refused[0]!, 'a login finding the line full');
  const checkedAfter = checked.filter((i) => stillWaiting.has(i)).length;
  t.ok(checkedAfter >= checked.length / 2, `the send and upload were answered before most checks (${checkedAfter} of ${checked.length} still waiting)`);
});

t.test('X-Forwarded-For names the client only when a trusted proxy sends it', async (t) => {
  const anonymous = { limit: 3, windowSeconds: 3600 };
  const settings = (server: TestServer, forwardedFor: string) => server.api.as(null, { 'X-Forwarded-For': forwardedFor }).get('/server_settings');

  const direct = await startTestServer(t, { clientBudgets: { ...BUDGETS, anonymous } });
  const spoofed = await Promise.all(['198.51.100.1', '198.51.100.2', '198.51.100.3', '198.51.100.4'].map((address) => settings(direct, address)));
  t.same(spoofed.map((answer) => answer.status), [200, 200, 200, 429], 'without trusted proxies the header is ignored: one client');

  const proxied = await startTestServer(t, { clientBudgets: { ...BUDGETS, anonymous }, trustedProxies: ['127.0.0.1'] });
  for (let i = 0; i < 3; i++) t.equal((await settings(proxied, '198.51.100.1')).status, 200, `client 1, request ${i + 1}`);
  t.equal((await settings(proxied, '198.51.100.1')).status, 429, 'client 1 is over its budget');
  t.equal((await settings(proxied, '198.51.100.2')).status, 200, 'client 2, behind the same proxy, is not');
  t.equal((await settings(proxied, 'made-up, 198.51.100.1')).status, 429, 'what the client wrote before the address the proxy added is not taken');
  const fromV6 = await Promise.all(['2001:db8:1:2::10', '2001:db8:1:2:ffff::20', '2001:db8:1:2::30', '2001:db8:1:2::40'].map((address) => settings(proxied, address)));
  t.same(fromV6.map((answer) => answer.status), [200, 200, 200, 429], 'IPv6 addresses of one /64 are one client');
});

t.test('anonymous registrations in a web-public organization are limited per client and server-wide', async (t) => {
  const server = await startTestServer(t, {
    webPublicStreamsEnabled: true,
    clientBudgets: { ...BUDGETS, anonymous: { limit: 5, windowSeconds: 3600 }, costly: { limit: 8, windowSeconds: 3600 } },
  });
  t.equal((await server.api.patch('/realm', { enable_spectator_access: true })).status, 200);
  t.equal((await server.api.post('/channels/create', { name: 'lobby', subscribers: [1], is_web_public: true })).status, 200);
  const register = (address: string) => site(server, address).post('/register');

  for (let i = 1; i <= 5; i++) t.equal((await register(CLIENT_A)).status, 200, `client A, registration ${i}`);
  isRateLimited(t, await register(CLIENT_A), 'client A, registration 6');
  for (let i = 1; i <= 3; i++) t.equal((await register(CLIENT_B)).status, 200, `client B, registration ${i}`);
  isRateLimited(t, await register('127.0.0.4'), 'a fresh client once the server-wide budget is spent');
  t.equal((await server.api.post('/register')).status, 200, 'a user with credentials still registers');
});

t.test("changing one's password checks the old one within the same failure budget as a login", async (t) => {
  const server = await startTestServer(t);
  const ned = await server.api.createUser('ned@example.com', 'Ned', PASSWORD);
  // Someone holding Ned's API key, trying to learn his password through the settings.
  const thief = site(server, CLIENT_A).as(ned);
  const change = (client: HostClient, old: string) => client.patch('/settings', { old_password: old, new_password: 'a-New-passw0rd-for-ned' });
  for (let attempt = 1; attempt <= 5; attempt++) {
    t.equal((await change(thief, `wrong-Passw0rd-${attempt}`)).body.msg, 'Wrong password!', `guess ${attempt} is checked`);
  }
  isRateLimited(t, await change(thief, PASSWORD), 'the sixth, even the right one');
  isRateLimited(t, await login(site(server, CLIENT_A), ned.email, PASSWORD), 'a login from that client too');
  t.equal((await change(site(server, CLIENT_B).as(ned), PASSWORD)).status, 200, 'Ned, from his own client, changes his password');
});

t.test("uWS's full-form peer addresses (a dual-stack listener) are read as clients of their own", async (t) => {
  const none = new Set<string>();
  const a = clientAddress('0000:0000:0000:0000:0000:ffff:7f00:0002', '', none);
  const b = clientAddress('0000:0000:0000:0000:0000:ffff:7f00:0003', '', none);
  t.equal(a, CLIENT_A, 'an IPv4 client of a dual-stack listener is its IPv4 address');
  t.not(clientKey(a), clientKey(b), 'two IPv4 clients have two budgets');
  t.equal(clientAddress('2001:0db8:0001:0002:0000:0000:0000:0010', '', none), '2001:db8:1:2::10', 'IPv6 in its short form');
  t.equal(clientAddress('0000:0000:0000:0000:0000:ffff:7f00:0001', '198.51.100.1', new Set(['127.0.0.1'])), '198.51.100.1', 'a trusted proxy is recognized whatever the notation');
});
