import t from 'tap';
import { drain } from './helpers/messages.ts';
import { startTestServer, type ApiClient, type ApiResult, type Credentials } from './helpers/server.ts';

type Test = Parameters<Parameters<typeof t.test>[0]>[0];

/**
 * A guest limited by `can_access_all_users_group` knows only itself, bots, the users of its channels and
 * those it has direct messages with. Every route that returns a user or takes one applies it: a user the
 * guest may not access is answered exactly like one that does not exist (no directory, no existence
 * oracle), and the registration-time rule is no longer the only one.
 */

interface Target {
  id: number;
  email: string;
}

interface Row {
  name: string;
  call(guest: ApiClient, target: Target): Promise<ApiResult>;
  /** what the guest gets for a user it may access */
  accessible: number;
}

const NARROW = (operator: string, operand: string | number) => ({ narrow: JSON.stringify([{ operator, operand }]), anchor: 'newest', num_before: 10, num_after: 0 });

async function avatar(guest: ApiClient, who: string): Promise<ApiResult> {
  const response = await fetch(`${guest.baseUrl}/avatar/${encodeURIComponent(who)}`, {
    redirect: 'manual',
    headers: { Authorization: `Basic ${Buffer.from(`${guest.credentials!.email}:${guest.credentials!.key}`).toString('base64')}` },
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // a redirect's empty body
  }
  return { status: response.status, headers: response.headers, body };
}

const ROWS: Row[] = [
  { name: 'GET /users/{id}', call: (g, u) => g.get(`/users/${u.id}`), accessible: 200 },
  { name: 'GET /users/{email}', call: (g, u) => g.get(`/users/${encodeURIComponent(u.email)}`), accessible: 200 },
  { name: 'GET /avatar/{id}', call: (g, u) => avatar(g, String(u.id)), accessible: 302 },
  { name: 'GET /avatar/{email}', call: (g, u) => avatar(g, u.email), accessible: 302 },
  { name: 'GET /users/{id}/presence', call: (g, u) => g.get(`/users/${u.id}/presence`), accessible: 200 },
  { name: 'GET /users/{email}/presence', call: (g, u) => g.get(`/users/${encodeURIComponent(u.email)}/presence`), accessible: 200 },
  { name: 'GET /users/{id}/status', call: (g, u) => g.get(`/users/${u.id}/status`), accessible: 200 },
  { name: 'GET /users/{id}/subscriptions/{channel}', call: async (g, u) => g.get(`/users/${u.id}/subscriptions/${await channelId(g, 'shared')}`), accessible: 200 },
  { name: 'GET /messages sender:{email}', call: (g, u) => g.get('/messages', NARROW('sender', u.email)), accessible: 200 },
  { name: 'GET /messages sender:{id}', call: (g, u) => g.get('/messages', NARROW('sender', u.id)), accessible: 200 },
  { name: 'GET /messages dm:{email}', call: (g, u) => g.get('/messages', NARROW('dm', u.email)), accessible: 200 },
  { name: 'GET /messages dm-including:{id}', call: (g, u) => g.get('/messages', NARROW('dm-including', u.id)), accessible: 200 },
  { name: 'POST /typing to [id]', call: (g, u) => g.post('/typing', { op: 'start', to: [u.id] }), accessible: 200 },
  { name: 'POST /messages direct to [id]', call: (g, u) => g.post('/messages', { type: 'direct', to: [u.id], content: 'hello' }), accessible: 200 },
  { name: 'POST /messages direct to email', call: (g, u) => g.post('/messages', { type: 'direct', to: u.email, content: 'hello' }), accessible: 200 },
  { name: 'POST /users/me/muted_users/{id}', call: (g, u) => g.post(`/users/me/muted_users/${u.id}`), accessible: 200 },
  { name: 'DELETE /users/me/muted_users/{id}', call: (g, u) => g.delete(`/users/me/muted_users/${u.id}`), accessible: 200 },
  { name: 'GET /user_groups/{id}/members/{id}', call: async (g, u) => g.get(`/user_groups/${await groupId(g, 'role:everyone')}/members/${u.id}`), accessible: 200 },
  { name: 'POST /drafts to [id]', call: (g, u) => g.post('/drafts', { drafts: [{ type: 'private', to: [u.id], topic: '', content: 'draft' }] }), accessible: 200 },
];

async function groupId(api: ApiClient, name: string): Promise<number> {
  return (await api.get('/user_groups')).body.user_groups.find((group: { name: string }) => group.name === name).id;
}

async function channelId(api: ApiClient, name: string): Promise<number> {
  return (await api.get('/get_stream_id', { stream: name })).body.stream_id;
}

/** An answer with the user's id or email taken out of its text, to compare answers about different users. */
function shape(result: ApiResult, target: Target) {
  const scrub = (text: unknown) => (typeof text === 'string' ? text.replaceAll(target.email, 'USER').replaceAll(String(target.id), 'USER') : text);
  const body = result.body as { result?: string; code?: string; msg?: string; desc?: string };
  return { status: result.status, result: body.result, code: body.code, msg: scrub(body.msg), desc: scrub(body.desc) };
}

/**
 * Seen shares the channel `shared` with a guest, Hidden does not; `before` runs before
 * `can_access_all_users_group` limits guests to role:members.
 */
async function limitedGuest<T>(t: Test, before: (api: ApiClient, users: { seen: Credentials; hidden: Credentials }) => Promise<T>) {
  const { api } = await startTestServer(t, { rateLimit: null });
  const seen = await api.createUser('seen@example.com', 'Seen');
  const hidden = await api.createUser('hidden@example.com', 'Hidden');
  const guestCredentials = await api.createUser('guest@example.com', 'Guest');
  t.equal((await api.patch(`/users/${guestCredentials.userId}`, { role: 600 })).status, 200);
  await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'shared' }], principals: [seen.userId, guestCredentials.userId] });
  const made = await before(api, { seen, hidden });
  const groups: { id: number; name: string }[] = (await api.get('/user_groups')).body.user_groups;
  const members = groups.find((group) => group.name === 'role:members')!.id;
  t.equal((await api.patch('/realm', { can_access_all_users_group: { new: members } })).status, 200);
  return { api, seen, hidden, guestCredentials, guest: api.as(guestCredentials), made };
}

t.test('a limited guest: every route that returns or takes a user treats one it may not access as no user at all', async (t) => {
  const { api, seen, hidden, guest } = await limitedGuest(t, async (api, { seen, hidden }) => {
    await api.as(hidden).post('/users/me/subscriptions', { subscriptions: [{ name: 'elsewhere' }] });
    for (const who of [seen, hidden]) await api.as(who).post('/users/me/presence', { status: 'active' });
  });
  const visible: Target = { id: seen.userId, email: seen.email };
  const inaccessible: Target = { id: hidden.userId, email: hidden.email };
  const missing: Target = { id: 9999, email: 'nobody@example.com' };
  for (const row of ROWS) {
    const forMissing = await row.call(guest, missing);
    t.not(forMissing.status, row.accessible, `${row.name}: a missing user is refused`);
    const forHidden = await row.call(guest, inaccessible);
    t.same(shape(forHidden, inaccessible), shape(forMissing, missing), `${row.name}: a user the guest may not access answers like a missing one`);
    t.notOk(JSON.stringify(forHidden.body).includes('Hidden'), `${row.name}: nothing of the user is shown`);
    const forVisible = await row.call(guest, visible);
    t.equal(forVisible.status, row.accessible, `${row.name}: a user the guest may access is served`, { body: forVisible.body });
  }
  t.equal((await api.get(`/users/${hidden.userId}`)).body.user.email, hidden.email, 'members are not limited');
});

t.test('a limited guest lists the directory with placeholders for the users it may not access', async (t) => {
  const { api, seen, hidden, guestCredentials, guest, made: bot } = await limitedGuest(
    t, async (api): Promise<{ user_id: number }> => (await api.post('/bots', { full_name: 'Helper', short_name: 'helper', bot_type: 1 })).body,
  );
  const { queueId } = await guest.register({ event_types: ['presence'] });
  for (const who of [seen, hidden]) t.equal((await api.as(who).post('/users/me/presence', { status: 'active' })).status, 200);

  const listed: { user_id: number; full_name: string; email: string }[] = (await guest.get('/users', { include_custom_profile_fields: true })).body.members;
  const byId = new Map(listed.map((user) => [user.user_id, user]));
  t.equal(byId.get(seen.userId)?.email, seen.email, 'a user of its channel, in full');
  t.equal(byId.get(bot.user_id)?.full_name, 'Helper', 'bots are always accessible');
  t.match(byId.get(hidden.userId), { full_name: 'Unknown user', email: `user${hidden.userId}@unknown.invalid`, delivery_email: null });
  t.match(byId.get(1), { full_name: 'Unknown user' }, 'the owner, who shares no channel with the guest, too');
  const text = JSON.stringify(listed);
  for (const secret of ['hidden@example.com', 'Hidden', 'owner@']) t.notOk(text.includes(secret), `no trace of ${secret}`);
  const asked = (await guest.get('/users', { user_ids: JSON.stringify([hidden.userId, seen.userId]) })).body.members;
  t.match(asked, [{ user_id: hidden.userId, full_name: 'Unknown user' }, { user_id: seen.userId, full_name: 'Seen' }], 'user_ids too');

  // Presence: the guest reads and hears of the users it may access only.
  const heard = (await drain(guest, queueId)).map((event) => event.user_id);
  t.ok(heard.includes(seen.userId), 'a presence event for a user of its channel');
  t.notOk(heard.includes(hidden.userId), 'none for a user it may not access');
  const realmPresence = (await guest.get('/realm/presence')).body.presences;
  t.ok(seen.email in realmPresence);
  t.notOk(hidden.email in realmPresence, 'GET /realm/presence leaves it out');
  const reported = (await guest.post('/users/me/presence', { status: 'active', slim_presence: true })).body.presences;
  t.ok(String(seen.userId) in reported);
  t.notOk(String(hidden.userId) in reported, 'POST /users/me/presence too');
  const registered = (await guest.register({ fetch_event_types: ['presence'], slim_presence: true })).body.presences;
  t.notOk(String(hidden.userId) in registered, 'and the registration');
  t.ok(String(hidden.userId) in (await api.post('/users/me/presence', { status: 'active', slim_presence: true })).body.presences, 'members see it');

  // A direct message from the hidden user makes it accessible, as the original does.
  t.equal((await api.as(hidden).post('/messages', { type: 'direct', to: [guestCredentials.userId], content: 'hi' })).status, 200);
  t.equal((await guest.get(`/users/${hidden.userId}`)).body.user?.full_name, 'Hidden');
});
