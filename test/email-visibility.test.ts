import t, { type Test } from 'tap';
import { channel, drain, sendDirect, sendToChannel } from './helpers/messages.ts';
import { openRuntime } from './helpers/runtime.ts';
import { startTestServer, type ApiClient, type ApiResult, type Credentials } from './helpers/server.ts';

/**
 * `email_address_visibility` (a user setting since feature level 163): every user's `email` is the real
 * address only when its owner lets everyone see it, else the stand-in `user{id}@{realm host}`; a user
 * object's `delivery_email` is the real address for the viewers the setting allows (and the user itself),
 * null for the others. Every route and event that returns a user or an address is checked by searching its
 * whole answer for each user's real address, for every setting and every role of viewer.
 */

const VISIBILITY = { everyone: 1, members: 2, admins: 3, nobody: 4, moderators: 5 } as const;
const ROLE = { owner: 100, administrator: 200, moderator: 300, member: 400, guest: 600 } as const;

/** The original's rule (zerver/models/users.py ROLE_TO_ACCESSIBLE_EMAIL_ADDRESS_VISIBILITY_IDS). */
function mayRead(visibility: number, role: number): boolean {
  if (visibility === VISIBILITY.everyone) return true;
  if (visibility === VISIBILITY.members) return role <= ROLE.member;
  if (visibility === VISIBILITY.moderators) return role <= ROLE.moderator;
  if (visibility === VISIBILITY.admins) return role <= ROLE.administrator;
  return false;
}

interface Person extends Credentials {
  userId: number;
  role: number;
}
interface Target extends Person {
  visibility: number;
}

/** What an answer may show of a target: `user` objects carry `delivery_email`; the rest only the API address. */
type Kind = 'user' | 'address';

interface Row {
  name: string;
  kind: Kind;
  /** the answer is about the one target named (else about every target at once) */
  perTarget?: boolean;
  call(viewer: ApiClient, target: Target): Promise<ApiResult>;
}

const NARROW = (narrow: unknown[]) => ({ narrow: JSON.stringify(narrow), anchor: 'newest', num_before: 100, num_after: 0 });

const ROWS: Row[] = [
  { name: 'GET /users', kind: 'user', call: (v) => v.get('/users') },
  { name: 'GET /users?include_custom_profile_fields', kind: 'user', call: (v) => v.get('/users', { include_custom_profile_fields: true, client_extavatar: false }) },
  { name: 'GET /users/{id}', kind: 'user', perTarget: true, call: (v, u) => v.get(`/users/${u.userId}`) },
  { name: 'POST /register realm_user', kind: 'user', call: (v) => v.post('/register', { fetch_event_types: JSON.stringify(['realm_user']) }) },
  { name: 'GET /messages channel', kind: 'address', call: (v) => v.get('/messages', NARROW([{ operator: 'channel', operand: 'shared' }])) },
  { name: 'GET /messages dm', kind: 'address', perTarget: true, call: (v, u) => v.get('/messages', NARROW([{ operator: 'dm', operand: [u.userId] }])) },
  { name: 'GET /realm/presence', kind: 'address', call: (v) => v.get('/realm/presence') },
  { name: 'POST /register presence, messages', kind: 'address', call: (v) => v.post('/register', { fetch_event_types: JSON.stringify(['presence', 'message', 'recent_private_conversations']) }) },
];

async function setup(t: Test) {
  const { api } = await startTestServer(t, { rateLimit: null });
  const person = async (email: string, role: number): Promise<Person> => {
    const credentials = await api.createUser(email, email.split('@')[0]);
    if (role !== ROLE.member) t.equal((await api.patch(`/users/${credentials.userId}`, { role })).status, 200);
    return { ...credentials, role };
  };
  const me = (await api.get('/users/me')).body;
  const viewers: Record<string, Person> = {
    owner: { ...api.credentials!, userId: me.user_id, role: ROLE.owner },
    administrator: await person('viewer-admin@example.com', ROLE.administrator),
    moderator: await person('viewer-moderator@example.com', ROLE.moderator),
    member: await person('viewer-member@example.com', ROLE.member),
    guest: await person('viewer-guest@example.com', ROLE.guest),
  };
  const targets: Target[] = [];
  for (const [name, visibility] of Object.entries(VISIBILITY)) {
    const target = { ...(await person(`secret-${name}@example.com`, ROLE.member)), visibility };
    t.equal((await api.as(target).patch('/settings', { email_address_visibility: visibility })).status, 200);
    targets.push(target);
  }
  const everybody = [...Object.values(viewers), ...targets];
  await channel(api, 'shared', everybody.map((user) => user.userId));
  return { api, viewers, targets, everybody };
}

t.test('every route answers with the real address exactly where the target user lets the viewer read it', async (t) => {
  const { api, viewers, targets, everybody } = await setup(t);
  // Events: each viewer's queue hears the targets send, react, type and come online.
  const queues = new Map<number, string>();
  for (const viewer of everybody) {
    queues.set(viewer.userId, (await api.as(viewer).register({ event_types: JSON.stringify(['message', 'reaction', 'typing', 'presence', 'realm_user']) })).queueId);
  }
  for (const target of targets) {
    const as = api.as(target);
    const id = await sendToChannel(as, 'shared', 'topic', `from ${target.userId}`);
    t.equal((await as.post(`/messages/${id}/reactions`, { emoji_name: 'smile' })).status, 200);
    for (const viewer of everybody) {
      if (viewer.userId === target.userId) continue;
      await sendDirect(as, [viewer.userId], 'hello');
      t.equal((await as.post('/typing', { op: 'start', to: JSON.stringify([viewer.userId]) })).status, 200);
    }
    t.equal((await as.post('/users/me/presence', { status: 'active' })).status, 200);
  }

  const check = (text: string, viewer: Person, kind: Kind, where: string, about: Target[] = targets) => {
    for (const target of about) {
      const allowed = kind === 'user' ? viewer.userId === target.userId || mayRead(target.visibility, viewer.role) : target.visibility === VISIBILITY.everyone;
      t.equal(text.includes(target.email), allowed, `${where}: ${target.email} ${allowed ? 'shown' : 'hidden'} to role ${viewer.role} (user ${viewer.userId})`);
    }
  };
  for (const viewer of everybody) {
    const client = api.as(viewer);
    for (const row of ROWS) {
      for (const target of targets) {
        // No one has direct messages with itself here.
        if (row.kind === 'address' && row.perTarget && target.userId === viewer.userId) continue;
        const result = await row.call(client, target);
        t.equal(result.status, 200, `${row.name} as ${viewer.email}`, { body: result.body });
        check(JSON.stringify(result.body), viewer, row.kind, row.name, row.perTarget ? [target] : targets);
        if (!row.perTarget) break;
      }
    }
    check(JSON.stringify((await client.get('/users/me')).body), viewer, 'user', 'GET /users/me', targets.filter((target) => target.userId === viewer.userId));
    check(JSON.stringify(await drain(client, queues.get(viewer.userId)!)), viewer, 'address', 'events');
  }

  // The stand-in is the API address, the same for every viewer.
  const user = (await api.as(viewers.guest!).get(`/users/${targets[1]!.userId}`)).body.user;
  t.match(user, { email: `user${targets[1]!.userId}@127.0.0.1`, delivery_email: null });
  t.match((await api.get(`/users/${targets[1]!.userId}`)).body.user, { email: `user${targets[1]!.userId}@127.0.0.1`, delivery_email: targets[1]!.email });
  t.match((await api.as(targets[1]!).get('/users/me')).body, { email: `user${targets[1]!.userId}@127.0.0.1`, delivery_email: targets[1]!.email });
  t.match((await api.get(`/users/${targets[0]!.userId}`)).body.user, { email: targets[0]!.email, delivery_email: targets[0]!.email });
});

t.test('lookups by address take the stand-in from anyone and the real address only from those who may read it', async (t) => {
  const { api, viewers, targets } = await setup(t);
  for (const target of targets) t.equal((await api.as(target).post('/users/me/presence', { status: 'active' })).status, 200);
  const missing = 'nobody-here@example.com';
  const sameAsMissing = async (name: string, call: (address: string) => Promise<ApiResult>, target: Target) => {
    const forMissing = await call(missing);
    const forTarget = await call(target.email);
    const scrub = (result: ApiResult) => ({ status: result.status, msg: String(result.body.msg).replaceAll(missing, 'X').replaceAll(target.email, 'X'), code: result.body.code });
    t.same(scrub(forTarget), scrub(forMissing), `${name}: ${target.email} answers like no user`);
  };
  for (const viewer of Object.values(viewers)) {
    const client = api.as(viewer);
    for (const target of targets) {
      const standIn = `user${target.userId}@127.0.0.1`;
      const lookups: [string, (address: string) => Promise<ApiResult>][] = [
        ['GET /users/{email}', (address) => client.get(`/users/${encodeURIComponent(address)}`)],
        ['GET /messages dm:{email}', (address) => client.get('/messages', NARROW([{ operator: 'dm', operand: address }]))],
        ['GET /messages sender:{email}', (address) => client.get('/messages', NARROW([{ operator: 'sender', operand: address }]))],
        ['POST /messages to {email}', (address) => client.post('/messages', { type: 'direct', to: address, content: 'hi' })],
        ['GET /users/{email}/presence', (address) => client.get(`/users/${encodeURIComponent(address)}/presence`)],
        ['POST /users/me/subscriptions principals', (address) => client.post('/users/me/subscriptions', { subscriptions: JSON.stringify([{ name: 'shared' }]), principals: JSON.stringify([address]) })],
      ];
      for (const [name, call] of lookups) {
        if (name.endsWith('principals') && viewer.role === ROLE.guest) continue; // guests may not subscribe others at all
        const byStandIn = await call(standIn);
        t.equal(byStandIn.status, 200, `${name} by the stand-in as role ${viewer.role}`, { body: byStandIn.body });
        if (mayRead(target.visibility, viewer.role)) {
          const byReal = await call(target.email);
          t.equal(byReal.status, 200, `${name} by the real address of ${target.email} as role ${viewer.role}`, { body: byReal.body });
        } else {
          await sameAsMissing(`${name} as role ${viewer.role}`, call, target);
        }
      }
    }
  }
  // Login keeps the real address.
  const hidden = targets.find((target) => target.visibility === VISIBILITY.nobody)!;
  const login = await api.as(null).post('/fetch_api_key', { username: hidden.email, password: 'a-Strong-passw0rd-for-tests' });
  t.equal(login.status, 200);
  t.equal(login.body.api_key, hidden.key);
});

t.test('a new setting gives and takes the real address by event; a new user is announced per reader', async (t) => {
  const { api, viewers, targets } = await setup(t);
  const target = targets.find((user) => user.visibility === VISIBILITY.everyone)!;
  const queues = new Map<string, string>();
  for (const [name, viewer] of Object.entries(viewers)) queues.set(name, (await api.as(viewer).register({ event_types: JSON.stringify(['realm_user']) })).queueId);
  const events = async (name: string) => (await drain(api.as(viewers[name]!), queues.get(name)!)).map((event) => event.person as Record<string, unknown>);
  const standIn = `user${target.userId}@127.0.0.1`;

  t.equal((await api.as(target).patch('/settings', { email_address_visibility: VISIBILITY.admins })).status, 200);
  t.same(await events('member'), [{ user_id: target.userId, delivery_email: null }, { user_id: target.userId, new_email: standIn }], 'a member loses it');
  t.same(await events('guest'), [{ user_id: target.userId, delivery_email: null }, { user_id: target.userId, new_email: standIn }]);
  t.same(await events('moderator'), [{ user_id: target.userId, delivery_email: null }, { user_id: target.userId, new_email: standIn }]);
  t.same(await events('administrator'), [{ user_id: target.userId, new_email: standIn }], 'an administrator keeps it');

  t.equal((await api.as(target).patch('/settings', { email_address_visibility: VISIBILITY.moderators })).status, 200);
  t.same(await events('moderator'), [{ user_id: target.userId, delivery_email: target.email }], 'a moderator gains it; the API address stays the stand-in');
  t.same(await events('member'), []);

  t.equal((await api.as(target).patch('/settings', { email_address_visibility: VISIBILITY.everyone })).status, 200);
  t.same(await events('member'), [{ user_id: target.userId, delivery_email: target.email }, { user_id: target.userId, new_email: target.email }]);

  // New users start from the realm's default for new users.
  t.equal((await api.patch('/realm/user_settings_defaults', { email_address_visibility: VISIBILITY.admins })).status, 200);
  const fresh = await api.createUser('fresh-secret@example.com', 'Fresh');
  const added = async (name: string) => (await events(name)).find((person) => person.user_id === fresh.userId);
  t.match(await added('member'), { email: `user${fresh.userId}@127.0.0.1`, delivery_email: null });
  t.notOk(JSON.stringify(await added('guest')).includes('fresh-secret'), 'nothing of the address in the guest’s event');
  t.match(await added('administrator'), { email: `user${fresh.userId}@127.0.0.1`, delivery_email: 'fresh-secret@example.com' });
  t.match((await api.as(fresh).get('/users/me')).body, { email: `user${fresh.userId}@127.0.0.1`, delivery_email: 'fresh-secret@example.com' });
});

t.test('the setting survives a restart', async (t) => {
  const first = await startTestServer(t, { rateLimit: null });
  const hidden = await first.api.createUser('kept-secret@example.com', 'Kept');
  const member = await first.api.createUser('reader@example.com', 'Reader');
  t.equal((await first.api.as(hidden).patch('/settings', { email_address_visibility: VISIBILITY.nobody })).status, 200);
  await first.stop();
  const second = await startTestServer(t, { dataDir: first.dataDir, rateLimit: null });
  const seen = (await second.api.as(member).get(`/users/${hidden.userId}`)).body.user;
  t.match(seen, { email: `user${hidden.userId}@127.0.0.1`, delivery_email: null });
  t.notOk(JSON.stringify((await second.api.get('/users')).body).includes('kept-secret'), 'not even the owner reads it');
  const { body } = await second.api.as(hidden).register({ fetch_event_types: JSON.stringify(['user_settings']) });
  t.equal(body.user_settings.email_address_visibility, VISIBILITY.nobody);
});

t.test('a setting made before it was applied (kept by the user actor only) is applied from the next start', async (t) => {
  const first = await startTestServer(t, { rateLimit: null });
  const hidden = await first.api.createUser('old-secret@example.com', 'Old');
  const member = await first.api.createUser('old-reader@example.com', 'Reader');
  await first.stop();
  // What an older server stored: the user's own setting, which the realm never learnt.
  const old = openRuntime(first.dataDir, { now: Date.now });
  await old.runtime.executeUser(1, hidden.userId, { type: 'settings.update', settings: { email_address_visibility: VISIBILITY.admins } });
  await old.runtime.snapshot(true);
  await old.store.close();
  const second = await startTestServer(t, { dataDir: first.dataDir, rateLimit: null });
  t.match((await second.api.as(member).get(`/users/${hidden.userId}`)).body.user, { email: `user${hidden.userId}@127.0.0.1`, delivery_email: null });
  t.match((await second.api.get(`/users/${hidden.userId}`)).body.user, { delivery_email: 'old-secret@example.com' }, 'an administrator reads it');
});
