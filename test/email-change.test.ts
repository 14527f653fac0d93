import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { decideUser } from '../actors/user/decide.ts';
import { confirmationKeyOwner, newConfirmationKey } from '../actors/user/email-change.ts';
import { applyUserChange } from '../actors/user/apply.ts';
import { emptyUserState } from '../actors/user/state.ts';
import { ChatError } from '../actors/errors.ts';
import { emptyRealm, Role, type UserProfile } from '../actors/realm/state.ts';
import { startTestServer, tempDir, type ApiClient, type TestServer } from './helpers/server.ts';
import { configFrom } from '../src/config.ts';

type Event = Record<string, unknown> & { type: string };

const poll = async (api: ApiClient, queueId: string) =>
  ((await api.get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true })).body.events as Event[]).map(
    ({ id: _id, ...event }) => event as Event,
  );

/** The confirmation link of the newest mail in the outbox (bodies are quoted-printable). */
function latestLink(dataDir: string): string {
  const outbox = join(dataDir, 'outbox');
  const newest = readdirSync(outbox).sort().at(-1)!;
  const body = readFileSync(join(outbox, newest), 'utf8').replace(/=\r?\n/g, '').replace(/=3D/g, '=');
  const match = /(https?:\/\/\S+\/accounts\/confirm_new_email\/[A-Za-z0-9]+)/.exec(body);
  if (!match) throw new Error(`no confirmation link in ${newest}`);
  return match[1]!;
}

async function follow(link: string, method = 'GET') {
  const response = await fetch(link, { method });
  return { status: response.status, body: await response.json() };
}

async function requestChange(server: TestServer, api: ApiClient, email: string): Promise<string> {
  const requested = await api.patch('/settings', { email });
  if (requested.status !== 200) throw new Error(JSON.stringify(requested.body));
  return latestLink(server.dataDir);
}

const login = (api: ApiClient, username: string, password: string) => api.as(null).post('/fetch_api_key', { username, password });

t.test('following the link changes the address: announced, the new one logs in, the old one no longer does', async (t) => {
  const server = await startTestServer(t);
  const { api, owner, ownerPassword } = server;
  const member = await api.createUser('member@example.com');
  const { queueId } = await api.as(member).register({ event_types: ['realm_user'] });

  const link = await requestChange(server, api, 'New.Owner@example.com');
  t.match(link, new RegExp(`^${server.url}/accounts/confirm_new_email/`), 'the link is on the realm URL, outside the API');
  t.same(await poll(api.as(member), queueId), [], 'nothing is announced before the link is followed');

  const followed = await follow(link);
  t.equal(followed.status, 200);
  t.same(followed.body, {
    result: 'success', msg: 'The email address of your account is now New.Owner@example.com.', new_email: 'New.Owner@example.com',
  });
  t.same(await poll(api.as(member), queueId), [
    { type: 'realm_user', op: 'update', person: { user_id: 1, delivery_email: 'New.Owner@example.com' } },
    { type: 'realm_user', op: 'update', person: { user_id: 1, new_email: 'New.Owner@example.com' } },
  ], 'the delivery email and the API email, to everyone');

  const renamed = api.as({ email: 'new.owner@example.com', key: owner.key });
  const me = await renamed.get('/users/me');
  t.equal(me.status, 200, 'API credentials with the new address (in any case) work');
  t.equal(me.body.email, 'New.Owner@example.com');
  t.equal((await api.get('/users/me')).body.code, 'UNAUTHORIZED', 'with the old address they do not');
  t.equal((await login(api, 'New.Owner@example.com', ownerPassword)).status, 200, 'the new address logs in');
  t.equal((await login(api, owner.email, ownerPassword)).body.code, 'AUTHENTICATION_FAILED', 'the old one does not');
  const users = (await renamed.get('/users')).body.members.map((user: { email: string }) => user.email);
  t.ok(users.includes('New.Owner@example.com') && !users.includes(owner.email), 'the user list has the new address');

  const again = await follow(link);
  t.equal(again.status, 404, 'a link works once');
  t.same(again.body, { result: 'error', msg: 'Invalid or expired confirmation link', code: 'BAD_REQUEST' });
  t.equal((await renamed.createUser(owner.email, 'Reuse')).email, owner.email, 'the old address is free for another account');
});

t.test('unknown, malformed, replaced and misplaced keys', async (t) => {
  const server = await startTestServer(t);
  const { api } = server;
  const base = `${server.url}/accounts/confirm_new_email`;
  const first = await requestChange(server, api, 'first@example.com');
  const firstKey = first.split('/').at(-1)!;

  const notFound = [
    `${base}/${'A'.repeat(24)}`,
    `${base}/11${'A'.repeat(24)}`, // the owner's ID, with a key that is not theirs
    `${base}/3zzz${firstKey.slice(2)}`, // a user that does not exist
    `${base}/${firstKey}x`,
    `${base}/${firstKey.slice(0, -1)}`,
  ];
  for (const link of notFound) {
    const refused = await follow(link);
    t.equal(refused.status, 404, link);
    t.equal(refused.body.msg, 'Invalid or expired confirmation link', link);
  }
  t.equal((await follow(`${base}/`)).status, 404, 'no key');
  t.equal((await follow(`${server.url}/api/v1/accounts/confirm_new_email/${firstKey}`)).status, 404, 'not an API path');
  const posted = await follow(first, 'POST');
  t.equal(posted.status, 405, 'only GET');
  t.equal(posted.body.code, 'BAD_REQUEST');

  const second = await requestChange(server, api, 'second@example.com');
  t.not(second, first);
  t.equal((await follow(first)).status, 404, 'a newer request replaces the older one');
  t.equal((await follow(second)).status, 200);
  t.equal((await api.as({ email: 'second@example.com', key: server.owner.key }).get('/users/me')).body.email, 'second@example.com');
});

t.test('an address taken since the request is refused, and the link stays usable', async (t) => {
  const server = await startTestServer(t);
  const { api, owner } = server;
  const link = await requestChange(server, api, 'wanted@example.com');
  const holder = await api.createUser('WANTED@example.com');
  const refused = await follow(link);
  t.equal(refused.status, 400);
  t.same(refused.body, { result: 'error', msg: "Email 'wanted@example.com' already in use", code: 'BAD_REQUEST' });
  t.equal((await api.get('/users/me')).body.email, owner.email, 'the address did not change');

  t.equal((await api.delete(`/users/${holder.userId}`)).status, 200);
  t.equal((await follow(link)).status, 400, 'a deactivated account still holds its address');
});

t.test("the organization's domain restrictions apply to a new address, as at sign-up", async (t) => {
  const server = await startTestServer(t);
  const { api } = server;
  t.equal((await api.post('/realm/domains', { domain: 'example.com', allow_subdomains: false })).status, 200);
  t.equal((await api.patch('/realm', { emails_restricted_to_domains: true })).status, 200);
  const outside = await api.patch('/settings', { email: 'me@elsewhere.org' });
  t.same([outside.status, outside.body.msg], [400, 'Outside your domain.']);
  const plus = await api.patch('/settings', { email: 'me+tag@example.com' });
  t.same([plus.status, plus.body.msg], [400, 'Email addresses containing + are not allowed.']);
  const link = await requestChange(server, api, 'me@example.com');
  const followed = await follow(link);
  t.same([followed.status, followed.body.new_email], [200, 'me@example.com'], 'an address of the domain is taken');
});

t.test('a deactivated user cannot confirm', async (t) => {
  const server = await startTestServer(t);
  const { api } = server;
  const member = await api.createUser('member@example.com');
  const link = await requestChange(server, api.as(member), 'moved@example.com');
  t.equal((await api.delete(`/users/${member.userId}`)).status, 200);
  const refused = await follow(link);
  t.equal(refused.status, 401);
  t.equal(refused.body.code, 'USER_DEACTIVATED');
  t.equal((await api.get(`/users/${member.userId}`)).body.user.email, 'member@example.com');
});

t.test('a user may ask for 5 changes a day: the sixth is refused with 429 and mails nothing', async (t) => {
  // Each request mails a link to whatever address the user names: the budget is all that stops a mail cannon.
  const server = await startTestServer(t, { rateLimit: null });
  const { api } = server;
  const member = await api.createUser('member@example.com');
  const other = await api.createUser('other@example.com');
  const mails = () => readdirSync(join(server.dataDir, 'outbox')).length;

  // What mails nothing spends nothing: no change, an address in use, a refused one.
  t.equal((await api.as(member).patch('/settings', { email: 'member@example.com' })).status, 200);
  t.equal((await api.as(member).patch('/settings', { email: 'other@example.com' })).status, 400);
  t.equal((await api.patch('/realm', { email_changes_disabled: true })).status, 200);
  t.equal((await api.as(member).patch('/settings', { email: 'off@example.com' })).status, 400);
  t.equal((await api.patch('/realm', { email_changes_disabled: false })).status, 200);

  const links: string[] = [];
  for (let i = 1; i <= 5; i++) links.push(await requestChange(server, api.as(member), `try${i}@example.com`));
  const before = mails();
  const refused = await api.as(member).patch('/settings', { email: 'try6@example.com' });
  t.equal(refused.status, 429);
  t.match(refused.body, { result: 'error', code: 'RATE_LIMIT_HIT', msg: 'Too many email address changes requested; try again later' });
  t.ok(refused.body['retry-after'] > 0 && Number(refused.headers.get('retry-after')) > 0, 'with the seconds to wait');
  t.equal(mails(), before, 'no mail for the refused one');
  t.equal((await follow(links[4]!)).status, 200, 'the last link mailed still works');
  t.equal((await api.get(`/users/${member.userId}`)).body.user.email, 'try5@example.com');

  t.equal((await api.as(other).patch('/settings', { email: 'other2@example.com' })).status, 200, 'the budget is per user');
  t.equal(mails(), before + 1);
});

t.test('the budget of email changes is read from the environment', async (t) => {
  t.same(configFrom({}, {}).emailChangeLimit, { limit: 5, windowSeconds: 86_400 }, 'by default');
  t.same(configFrom({}, { CHAT_EMAIL_CHANGE_LIMIT: '2/3600' }).emailChangeLimit, { limit: 2, windowSeconds: 3600 });
  t.equal(configFrom({}, { CHAT_EMAIL_CHANGE_LIMIT: 'off' }).emailChangeLimit, null);
  t.throws(() => configFrom({}, { CHAT_EMAIL_CHANGE_LIMIT: 'five' }), /CHAT_EMAIL_CHANGE_LIMIT/);
});

t.test('a pending change and a confirmed one survive restarts', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await startTestServer(t, { dataDir });
  const link = await requestChange(first, first.api, 'restarted@example.com');
  await first.stop();

  const second = await startTestServer(t, { dataDir });
  // The server listens on a new port: the link's path is what counts.
  const path = new URL(link).pathname;
  t.equal((await follow(`${second.url}${path}`)).status, 200, 'the pending change outlived the restart');
  await second.stop();

  const third = await startTestServer(t, { dataDir });
  const key = first.owner.key;
  t.equal((await third.api.as({ email: 'restarted@example.com', key }).get('/users/me')).status, 200, 'the new address after a restart');
  t.equal((await third.api.as({ email: first.owner.email, key }).get('/users/me')).body.code, 'UNAUTHORIZED', 'the old one stays gone');
  t.equal((await follow(`${third.url}${path}`)).status, 404, 'the used link stays used');
  await third.stop();
});

t.test('confirmation keys: they name their user, and expire after a day', async (t) => {
  for (const userId of [1, 35, 36, 1295, 123_456_789]) {
    const key = newConfirmationKey(userId);
    t.match(key, /^[A-Za-z0-9]+$/, `${userId}: letters and digits only`);
    t.equal(confirmationKeyOwner(key), userId, `${userId}: the key names its user`);
  }
  t.not(newConfirmationKey(1), newConfirmationKey(1), 'each key is new');
  for (const bad of ['', '0', `0${'A'.repeat(24)}`, `1${'A'.repeat(24)}`, `1a${'A'.repeat(23)}`, `1A${'A'.repeat(24)}`, `1a${'A'.repeat(23)}!`]) {
    t.equal(confirmationKeyOwner(bad), null, JSON.stringify(bad));
  }

  let now = Date.UTC(2026, 0, 1);
  const clock = { now: () => now };
  const state = emptyUserState(1, 7);
  const realm = emptyRealm(1, '', 'R', 0);
  realm.users.set(7, { userId: 7, email: 'o@example.com', role: Role.member, isActive: true } as UserProfile);
  for (const change of decideUser(state, { type: 'email.request_change', newEmail: 'n@example.com', realm }, clock)) applyUserChange(state, change);
  const key = state.pendingEmailChange!.token;
  t.equal(confirmationKeyOwner(key), 7);
  now += 24 * 60 * 60 * 1000;
  t.throws(() => decideUser(state, { type: 'email.confirm_change', token: key }, clock), new ChatError('BAD_REQUEST', 'Invalid or expired confirmation link', 404), 'a day later it has expired');
  now -= 1000;
  t.same(decideUser(state, { type: 'email.confirm_change', token: key }, clock), [{ type: 'email.change_confirmed' }], 'a second before, it works');
});
