import { rmSync } from 'node:fs';
import t from 'tap';
import { DEFAULT_REALM_LIMITS } from '../actors/realm/limits.ts';
import { childServers } from './helpers/child.ts';
import { keyOf, outbox } from './helpers/invitations.ts';
import { advanceClock } from './helpers/messages.ts';
import { startTestServer, tempDir, type ApiClient } from './helpers/server.ts';

const PASSWORD = 'a-Strong-passw0rd-for-joining';

const error = (msg: string, code = 'BAD_REQUEST') => ({ result: 'error', msg, code });
const unknownLink = error('This invitation link is not valid. Check that you copied the whole link.');
const full = (count: number, what: string) => error(`This organization already has ${count} ${what}, the most it may have`);

/** What following an invitation's link says (GET /invites/join/{key}): only whether it can make an account, or why not. */
const follow = async (api: ApiClient, key: string) => {
  const { body } = await api.as(null).get(`/invites/join/${key}`);
  return body.result === 'success' ? 'usable' : body.msg as string;
};
const join_ = (api: ApiClient, key: string, params: Record<string, unknown>) => api.as(null).post(`/invites/join/${key}`, params);
const send = (api: ApiClient, emails: string, minutes: number | null = 24 * 60) =>
  api.post('/invites', { invitee_emails: emails, stream_ids: [], invite_expires_in_minutes: minutes });
const listed = async (api: ApiClient) =>
  ((await api.get('/invites')).body.invites as { email?: string; link_url?: string }[]).map((invite) => invite.email ?? keyOf(invite.link_url!));

t.test('an organization keeps a bounded number of invitations of each kind: the oldest unusable ones make room, the usable ones never', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const start = () => startTestServer(t, { dataDir, rateLimit: null, invitationsPerDay: null, realmLimits: { ...DEFAULT_REALM_LIMITS, invitations: 3 } });
  let server = await start();
  let { api } = server;
  const keyFor = (email: string) => keyOf(outbox(server).find((mail) => mail.to === email)!.link);

  // Email invitations: a is used, b revoked, c pending.
  t.equal((await send(api, 'a@example.com, b@example.com, c@example.com')).status, 200);
  const [a, b, c] = ['a@example.com', 'b@example.com', 'c@example.com'].map(keyFor) as [string, string, string];
  t.equal((await join_(api, a, { full_name: 'Ay', password: PASSWORD })).status, 200);
  t.equal((await api.delete('/invites/2')).status, 200);

  t.equal((await send(api, 'd@example.com', 60)).status, 200, 'a fourth: the oldest unusable one makes room');
  const d = keyFor('d@example.com');
  t.same(await follow(api, a), unknownLink.msg, 'the used one is forgotten: its link names nothing');
  t.same(await follow(api, b), 'This invitation has been revoked. Ask for a new one.', 'the revoked one is kept, as one was enough');
  t.same((await api.delete('/invites/1')).body, error('No such invitation'));

  t.same((await send(api, 'e@example.com, f@example.com')).body, error('This organization has 2 usable email invitations and may have at most 3; these 2 would make 4'),
    'two where one unusable one could make room: refused whole');
  t.same(await follow(api, b), 'This invitation has been revoked. Ask for a new one.', 'and nothing was forgotten');
  t.equal((await send(api, 'e@example.com')).status, 200);
  t.same(await follow(api, b), unknownLink.msg, 'now the revoked one is forgotten');
  t.same((await send(api, 'f@example.com')).body, full(3, 'usable email invitations'), 'the usable ones alone fill the bound');
  t.same(await listed(api), ['c@example.com', 'd@example.com', 'e@example.com'], 'none of them was forgotten');
  const e = keyFor('e@example.com');
  await api.createUser('e@example.com', 'Ee');
  t.equal((await send(api, 'h@example.com')).status, 200, 'an invitation whose address has since got an account makes room');
  t.same(await follow(api, e), unknownLink.msg);

  advanceClock(server, 61 * 60);
  t.equal((await send(api, 'f@example.com')).status, 200, 'an expired one makes room');
  t.same(await follow(api, d), unknownLink.msg, 'the expired one (d), not the older usable one (c)');
  t.same((await api.post('/invites/4/resend')).body, error('No such invitation'));
  t.same(await follow(api, c), 'usable');

  // Reusable links count apart: their own three.
  const links: string[] = [];
  for (let i = 0; i < 3; i++) links.push(keyOf((await api.post('/invites/multiuse', {})).body.invite_link));
  t.equal((await api.delete('/invites/multiuse/1')).status, 200);
  t.equal((await api.post('/invites/multiuse', {})).status, 200, 'a fourth link: the revoked one makes room');
  t.same(await follow(api, links[0]!), unknownLink.msg);
  t.same((await api.post('/invites/multiuse', {})).body, full(3, 'usable invitation links'));
  const before = await listed(api);

  await server.stop();
  server = await start();
  api = server.api;
  t.same(await listed(api), before, 'after a restart: the same invitations');
  for (const key of [a, b, d, links[0]!]) t.same(await follow(api, key), unknownLink.msg, 'the forgotten stay forgotten');
  t.same((await send(api, 'g@example.com')).body, full(3, 'usable email invitations'), 'the bound holds');
  t.same((await api.post('/invites/multiuse', {})).body, full(3, 'usable invitation links'));
  t.equal((await join_(api, c, { full_name: 'Cee', password: PASSWORD })).status, 200, 'the oldest usable one still makes its account');
  t.equal((await send(api, 'g@example.com')).status, 200, 'and, used, makes room');
  t.same(await follow(api, c), unknownLink.msg);
});

t.test('forgotten invitations stay forgotten when the log is replayed (SIGKILL)', async (t) => {
  const dataDir = tempDir();
  const children = childServers(t, [dataDir]);
  const env = { CHAT_MAX_INVITATIONS_PER_REALM: '2' };
  const first = await children.start(dataDir, env);
  const link = async (api: ApiClient) => (await api.post('/invites/multiuse', {})).body;
  const [one, two] = [keyOf((await link(first.api)).invite_link), keyOf((await link(first.api)).invite_link)];
  t.equal((await first.api.delete('/invites/multiuse/1')).status, 200);
  const three = keyOf((await link(first.api)).invite_link);
  first.process.kill('SIGKILL');
  await first.exited;

  const again = await children.start(dataDir, env);
  t.same(await follow(again.api, one), unknownLink.msg, 'the forgotten link');
  t.same([await follow(again.api, two), await follow(again.api, three)], ['usable', 'usable']);
  t.same(await listed(again.api), [two, three]);
  t.same(await link(again.api), full(2, 'usable invitation links'), 'the bound holds');
});

t.test('an organization has a bounded number of accounts, bots and deactivated ones included, however they are made', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const start = (users: number) => startTestServer(t, { dataDir, rateLimit: null, realmLimits: { ...DEFAULT_REALM_LIMITS, users } });
  let server = await start(4);
  let { api } = server;
  const noRoom = (accounts: number, more: number) => ({
    result: 'error', code: 'INVITATION_FAILED', errors: [], sent_invitations: false, license_limit_reached: true, daily_limit_reached: false,
    msg: `This organization has ${accounts} accounts (bots and deactivated ones included) and may have at most 4: there is no room for ${more} more. No invitations were sent.`,
  });
  const atBound = full(4, 'accounts (bots and deactivated ones included)');

  // The owner is the first of four.
  const ann = await api.createUser('ann@example.com', 'Ann');
  t.equal((await api.post('/bots', { full_name: 'Deploy Bot', short_name: 'deploy' })).status, 200, 'a bot is the third');
  t.equal((await send(api, 'inv@example.com')).status, 200, 'an invitation while its account has room');
  t.same((await send(api, 'x@example.com, y@example.com')).body, noRoom(3, 2), 'two invitations where one account fits');
  const link = keyOf((await api.post('/invites/multiuse', {})).body.invite_link);
  await api.createUser('cat@example.com', 'Cat');

  t.same((await api.post('/users', { email: 'dan@example.com', password: PASSWORD, full_name: 'Dan' })).body, atBound, 'POST /users');
  t.same((await api.post('/bots', { full_name: 'Other Bot', short_name: 'other' })).body, atBound, 'a new bot');
  const invited = keyOf(outbox(server)[0]!.link);
  t.same((await join_(api, invited, { full_name: 'Inv', password: PASSWORD })).body, atBound, "an email invitation's link");
  t.same((await join_(api, link, { email: 'guest@example.com', full_name: 'Guest', password: PASSWORD })).body, atBound, 'a reusable link');
  t.same((await send(api, 'x@example.com')).body, noRoom(4, 1), 'a new invitation');
  t.equal((await api.delete(`/users/${ann.userId}`)).status, 200);
  t.same((await api.post('/users', { email: 'dan@example.com', password: PASSWORD, full_name: 'Dan' })).body, atBound, 'a deactivated account still counts');

  await server.stop();
  server = await start(4);
  api = server.api;
  t.same((await api.post('/users', { email: 'dan@example.com', password: PASSWORD, full_name: 'Dan' })).body, atBound, 'after a restart');
  await server.stop();
  server = await start(5);
  api = server.api;
  t.same(await follow(api, invited), 'usable', 'a refused account left its invitation unused');
  t.match((await join_(api, invited, { full_name: 'Inv', password: PASSWORD })).body, { result: 'success', email: 'inv@example.com' }, 'with a higher bound, it is made');
  t.same((await api.post('/bots', { full_name: 'Other Bot', short_name: 'other' })).body, full(5, 'accounts (bots and deactivated ones included)'));
});
