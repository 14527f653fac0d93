import t from 'tap';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type ApiClient, type ApiResult, type Credentials } from './helpers/server.ts';
import { channel, sendDirect, sendToChannel } from './helpers/messages.ts';

const PASSWORD = 'a-Strong-passw0rd-for-tests';

// A subtest, as `t.test` hands it to its callback.
type Test = Parameters<Parameters<typeof t.test>[0]>[0];

/** An error answer: HTTP status, the error envelope and its code (and message, when given). */
function isError(t: Test, response: ApiResult, status: number, code: string, msg?: string | RegExp): void {
  t.equal(response.status, status, `HTTP ${status}`, { body: response.body });
  t.equal(response.body?.result, 'error', 'error envelope');
  t.equal(response.body?.code, code, `code ${code}`);
  if (msg !== undefined) t.match(response.body?.msg, msg, 'error message');
}

function isSuccess(t: Test, response: ApiResult, what: string): void {
  t.equal(response.status, 200, `${what}: HTTP 200`, { body: response.body });
  t.equal(response.body?.result, 'success', `${what}: success envelope`);
}

async function myId(api: ApiClient, credentials: Credentials): Promise<number> {
  const me = await api.as(credentials).get('/users/me');
  if (me.status !== 200) throw new Error(`GET /users/me failed: ${JSON.stringify(me.body)}`);
  return me.body.user_id;
}

async function userById(api: ApiClient, id: number | string) {
  return api.get(`/users/${encodeURIComponent(String(id))}`);
}

const USER_FIELDS = [
  'user_id',
  'email',
  'full_name',
  'role',
  'is_admin',
  'is_owner',
  'is_guest',
  'is_bot',
  'is_active',
  'date_joined',
  'avatar_url',
  'avatar_version',
  'timezone',
  'delivery_email',
];

t.test('POST /users creates users, with its validation and permission rules', async (t) => {
  const { api, owner } = await startTestServer(t);
  const ownerId = await myId(api, owner);

  const created = await api.post('/users', { email: 'alice@example.com', password: PASSWORD, full_name: 'Alice Liddell' });
  isSuccess(t, created, 'owner creates a user');
  t.type(created.body.user_id, 'number', 'user_id is a number');
  t.not(created.body.user_id, ownerId, 'the new user has its own id');
  const aliceId: number = created.body.user_id;

  const fetched = await api.as(null).post('/fetch_api_key', { username: 'alice@example.com', password: PASSWORD });
  isSuccess(t, fetched, 'the new user fetches its API key');
  t.match(fetched.body.api_key, /^[A-Za-z0-9]{32}$/, '32-character alphanumeric key');
  t.equal(fetched.body.email, 'alice@example.com');
  t.equal(fetched.body.user_id, aliceId, 'fetch_api_key names the created user');
  const alice = { email: 'alice@example.com', key: fetched.body.api_key as string };
  const aliceMe = await api.as(alice).get('/users/me');
  isSuccess(t, aliceMe, 'the fetched key authenticates');
  t.equal(aliceMe.body.user_id, aliceId);
  t.equal(aliceMe.body.full_name, 'Alice Liddell');
  t.equal(aliceMe.body.role, 400, 'a created user is a member');

  isError(t, await api.post('/users', { email: 'alice@example.com', password: PASSWORD, full_name: 'Alice Again' }), 400, 'BAD_REQUEST');
  // Emails are compared without regard to case.
  isError(t, await api.post('/users', { email: 'ALICE@Example.com', password: PASSWORD, full_name: 'Alice Shouting' }), 400, 'BAD_REQUEST');
  isError(t, await api.post('/users', { email: 'not-an-email', password: PASSWORD, full_name: 'Nobody' }), 400, 'BAD_REQUEST');
  isError(t, await api.post('/users', { email: 'weak1@example.com', password: 'abc', full_name: 'Weak One' }), 400, 'BAD_REQUEST');
  isError(t, await api.post('/users', { email: 'weak2@example.com', password: 'password', full_name: 'Weak Two' }), 400, 'BAD_REQUEST');
  for (const email of ['not-an-email', 'weak1@example.com', 'weak2@example.com']) {
    isError(t, await userById(api, email), 400, 'BAD_REQUEST');
  }

  const missing = await api.post('/users', { email: 'nameless@example.com', password: PASSWORD });
  isError(t, missing, 400, 'REQUEST_VARIABLE_MISSING', "Missing 'full_name' argument");
  t.equal(missing.body.var_name, 'full_name', 'var_name names the missing parameter');

  const byMember = await api.as(alice).post('/users', { email: 'bymember@example.com', password: PASSWORD, full_name: 'By Member' });
  isError(t, byMember, 400, 'UNAUTHORIZED_PRINCIPAL');
  isError(t, await userById(api, 'bymember@example.com'), 400, 'BAD_REQUEST');
  // The permission is checked before the parameters, as in the original: a member learns nothing about the
  // password rules (nor makes the server run the strength check) by calling an endpoint it may not use.
  isError(
    t,
    await api.as(alice).post('/users', { email: 'bymember2@example.com', password: 'abc', full_name: 'By Member' }),
    400,
    'UNAUTHORIZED_PRINCIPAL',
  );

  isSuccess(t, await api.patch(`/users/${aliceId}`, { role: 200 }), 'owner makes alice an administrator');
  t.equal((await userById(api, aliceId)).body.user.is_admin, true, 'alice is an administrator now');
  const byAdmin = await api.as(alice).post('/users', { email: 'byadmin@example.com', password: PASSWORD, full_name: 'By Admin' });
  isError(t, byAdmin, 400, 'UNAUTHORIZED_PRINCIPAL');
  isError(t, await userById(api, 'byadmin@example.com'), 400, 'BAD_REQUEST');
});

t.test('DELETE /users/{id} deactivates, for administrators only', async (t) => {
  const { api, owner } = await startTestServer(t);
  const ownerId = await myId(api, owner);
  const bob = await api.createUser('bob@example.com', 'Bob');
  const carol = await api.createUser('carol@example.com', 'Carol');

  isError(t, await api.as(bob).delete(`/users/${carol.userId}`), 400, 'UNAUTHORIZED_PRINCIPAL');
  t.equal((await userById(api, carol.userId)).body.user.is_active, true, 'carol is still active');
  isSuccess(t, await api.as(carol).get('/users/me'), 'carol can still log in');

  isSuccess(t, await api.delete(`/users/${bob.userId}`), 'owner deactivates bob');
  isError(t, await api.as(bob).get('/users/me'), 401, 'USER_DEACTIVATED');
  const bobNow = await userById(api, bob.userId);
  isSuccess(t, bobNow, 'a deactivated user can still be looked up');
  t.equal(bobNow.body.user.is_active, false, 'GET /users/{id} shows is_active false');
  isError(t, await api.delete(`/users/${bob.userId}`), 400, 'BAD_REQUEST');
  isError(t, await api.delete('/users/999999'), 400, 'BAD_REQUEST');

  isError(t, await api.delete(`/users/${ownerId}`), 400, 'BAD_REQUEST', 'Cannot deactivate the only organization owner');
  isSuccess(t, await api.get('/users/me'), 'the owner is still active');
  t.equal((await userById(api, ownerId)).body.user.is_active, true);
});

t.test('DELETE /users/{id} with deactivation_notification_comment sends a mail', async (t) => {
  const { api, dataDir } = await startTestServer(t);
  const outbox = join(dataDir, 'outbox');
  const mails = () => (existsSync(outbox) ? readdirSync(outbox).filter((name) => name.endsWith('.eml')) : []);
  const dave = await api.createUser('dave@example.com', 'Dave');
  const erin = await api.createUser('erin@example.com', 'Erin');
  const frank = await api.createUser('frank@example.com', 'Frank');
  t.same(mails(), [], 'no mail before any deactivation');

  isSuccess(t, await api.delete(`/users/${erin.userId}`), 'deactivate without a comment');
  t.same(mails(), [], 'no mail without deactivation_notification_comment');

  const comment = 'Thanks for all your work on the garden project';
  isSuccess(t, await api.delete(`/users/${dave.userId}`, { deactivation_notification_comment: comment }), 'deactivate with a comment');
  const written = mails();
  t.equal(written.length, 1, 'one mail in the outbox');
  const text = readFileSync(join(outbox, written[0] ?? 'missing'), 'utf8');
  t.match(text, /^To: dave@example\.com\s*$/im, 'addressed to the deactivated user');
  t.ok(text.includes(comment), 'the mail carries the comment');

  // Not null but empty: the mail is still sent, only without custom text.
  isSuccess(t, await api.delete(`/users/${frank.userId}`, { deactivation_notification_comment: '' }), 'deactivate with an empty comment');
  const after = mails();
  t.equal(after.length, 2, 'an empty comment still sends a mail');
  const frankMail = after.filter((name) => !written.includes(name))[0] ?? 'missing';
  t.match(readFileSync(join(outbox, frankMail), 'utf8'), /^To: frank@example\.com\s*$/im, 'addressed to frank');
});

t.test('POST /users/{id}/reactivate restores access', async (t) => {
  const { api } = await startTestServer(t);
  const gina = await api.createUser('gina@example.com', 'Gina');
  const hugo = await api.createUser('hugo@example.com', 'Hugo');

  isSuccess(t, await api.delete(`/users/${gina.userId}`), 'deactivate gina');
  isError(t, await api.as(gina).get('/users/me'), 401, 'USER_DEACTIVATED');
  isError(t, await api.as(hugo).post(`/users/${gina.userId}/reactivate`), 400, 'UNAUTHORIZED_PRINCIPAL');
  isError(t, await api.as(gina).get('/users/me'), 401, 'USER_DEACTIVATED');

  isSuccess(t, await api.post(`/users/${gina.userId}/reactivate`), 'owner reactivates gina');
  const me = await api.as(gina).get('/users/me');
  isSuccess(t, me, 'gina can use her key again');
  t.equal(me.body.user_id, gina.userId);
  t.equal((await userById(api, gina.userId)).body.user.is_active, true, 'GET /users/{id} shows is_active true');

  isError(t, await api.post(`/users/${gina.userId}/reactivate`), 400, 'BAD_REQUEST');
  isError(t, await api.post(`/users/${hugo.userId}/reactivate`), 400, 'BAD_REQUEST');
});

t.test('GET /users, /users/{id}, /users/{email}, /users/me', async (t) => {
  const { api, owner } = await startTestServer(t);
  const ownerId = await myId(api, owner);
  const before = Date.now();
  const hank = await api.createUser('hank@example.com', 'Hank Hill');

  const list = await api.get('/users');
  isSuccess(t, list, 'GET /users');
  t.ok(Array.isArray(list.body.members), 'members is a list');
  const members: Record<string, unknown>[] = list.body.members ?? [];
  t.same(members.map((m) => m.user_id).sort(), [ownerId, hank.userId].sort(), 'both users are listed');
  for (const member of members) {
    t.hasOwnProps(member, USER_FIELDS, `user ${member.user_id} has every field`);
    t.match(
      member,
      {
        user_id: Number,
        email: String,
        full_name: String,
        role: Number,
        is_admin: Boolean,
        is_owner: Boolean,
        is_guest: Boolean,
        is_bot: Boolean,
        is_active: Boolean,
        date_joined: String,
        avatar_version: Number,
        timezone: String,
        delivery_email: String,
      },
      `user ${member.user_id} field types`,
    );
    t.equal(member.avatar_url, null, 'client_extavatar defaults to true: avatar_url null');
  }
  const listedOwner = members.find((m) => m.user_id === ownerId);
  t.match(listedOwner, { email: owner.email, role: 100, is_owner: true, is_admin: true, is_guest: false, is_bot: false, is_active: true });
  const listedHank = members.find((m) => m.user_id === hank.userId);
  t.match(listedHank, {
    email: 'hank@example.com',
    delivery_email: 'hank@example.com',
    full_name: 'Hank Hill',
    role: 400,
    is_owner: false,
    is_admin: false,
    is_guest: false,
    is_bot: false,
    is_active: true,
  });
  const joined = Date.parse(String(listedHank?.date_joined));
  t.ok(joined >= before - 2000 && joined <= Date.now() + 2000, `date_joined is an ISO time of creation (${listedHank?.date_joined})`);

  const withUrls = await api.get('/users', { client_extavatar: false });
  isSuccess(t, withUrls, 'GET /users client_extavatar=false');
  for (const member of withUrls.body.members ?? []) {
    t.type(member.avatar_url, 'string', `user ${member.user_id} has an avatar_url`);
    t.ok(member.avatar_url?.length > 0, 'avatar_url is not empty');
  }

  const one = await userById(api, hank.userId);
  isSuccess(t, one, 'GET /users/{id}');
  t.match(one.body.user, { user_id: hank.userId, email: 'hank@example.com', full_name: 'Hank Hill', role: 400, avatar_url: null });
  t.hasOwnProps(one.body.user, USER_FIELDS, 'GET /users/{id} has every field');
  const oneWithUrl = await api.get(`/users/${hank.userId}`, { client_extavatar: false });
  t.type(oneWithUrl.body.user?.avatar_url, 'string', 'GET /users/{id} client_extavatar=false gives an avatar_url');

  const byEmail = await userById(api, 'hank@example.com');
  isSuccess(t, byEmail, 'GET /users/{email}');
  t.equal(byEmail.body.user?.user_id, hank.userId, 'looked up by email');
  t.equal(byEmail.body.user?.full_name, 'Hank Hill');

  isError(t, await userById(api, 999999), 400, 'BAD_REQUEST');
  isError(t, await userById(api, 'nobody@example.com'), 400, 'BAD_REQUEST');

  const me = await api.as(hank).get('/users/me');
  isSuccess(t, me, 'GET /users/me');
  t.equal(me.body.user, undefined, 'fields are at the top level, not wrapped');
  t.hasOwnProps(me.body, USER_FIELDS, 'GET /users/me has every field');
  t.match(me.body, {
    user_id: hank.userId,
    email: 'hank@example.com',
    delivery_email: 'hank@example.com',
    full_name: 'Hank Hill',
    role: 400,
    is_admin: false,
    is_owner: false,
    is_guest: false,
    is_bot: false,
    is_active: true,
    avatar_url: String,
  });
});

t.test('PATCH /users/{id} changes names and roles', async (t) => {
  const { api, owner } = await startTestServer(t);
  const ownerId = await myId(api, owner);
  const ivan = await api.createUser('ivan@example.com', 'Ivan');
  const judy = await api.createUser('judy@example.com', 'Judy');

  isSuccess(t, await api.patch(`/users/${ivan.userId}`, { full_name: 'Ivan the Great' }), 'rename ivan');
  t.equal((await userById(api, ivan.userId)).body.user.full_name, 'Ivan the Great', 'the new name is shown');

  isError(t, await api.as(judy).patch(`/users/${ivan.userId}`, { full_name: 'Ivan the Terrible' }), 400, 'UNAUTHORIZED_PRINCIPAL');
  t.equal((await userById(api, ivan.userId)).body.user.full_name, 'Ivan the Great', 'a member cannot rename others');

  isSuccess(t, await api.patch(`/users/${ivan.userId}`, { role: 200 }), 'make ivan an administrator');
  t.match((await userById(api, ivan.userId)).body.user, { role: 200, is_admin: true, is_owner: false });

  isError(t, await api.patch(`/users/${judy.userId}`, { role: 250 }), 400, 'BAD_REQUEST');
  t.equal((await userById(api, judy.userId)).body.user.role, 400, 'an invalid role changes nothing');

  isError(t, await api.as(ivan).patch(`/users/${judy.userId}`, { role: 100 }), 400, 'UNAUTHORIZED_PRINCIPAL');
  t.equal((await userById(api, judy.userId)).body.user.role, 400, 'an administrator cannot make an owner');
  isError(t, await api.as(ivan).patch(`/users/${ownerId}`, { role: 400 }), 400, 'UNAUTHORIZED_PRINCIPAL');
  t.equal((await userById(api, ownerId)).body.user.role, 100, 'an administrator cannot demote an owner');

  isError(t, await api.patch(`/users/${ownerId}`, { role: 200 }), 400, 'BAD_REQUEST');
  const ownerNow = (await userById(api, ownerId)).body.user;
  t.match(ownerNow, { role: 100, is_owner: true }, 'the only owner keeps the owner role');
});

t.test('realm_user events for creation, (de)activation, renames and role changes', async (t) => {
  const { api } = await startTestServer(t);
  const leo = await api.createUser('leo@example.com', 'Leo');
  const { queueId, body: registered } = await api.register({ event_types: ['realm_user'] });
  t.equal(registered.last_event_id, -1, 'a fresh queue starts at -1');
  const leoQueue = await api.as(leo).register({ event_types: ['realm_user'] });

  let last = -1;
  const poll = async (client: ApiClient = api, queue = queueId, after = last) => {
    const response = await client.get('/events', { queue_id: queue, last_event_id: after, dont_block: true });
    if (response.status !== 200) throw new Error(`GET /events failed: ${JSON.stringify(response.body)}`);
    const events: { id: number; type: string; op: string; person: Record<string, unknown> }[] = response.body.events;
    if (client === api && events.length > 0) last = events[events.length - 1]!.id;
    return events;
  };

  t.same(await poll(), [], 'nothing queued yet');

  const created = await api.post('/users', { email: 'kate@example.com', password: PASSWORD, full_name: 'Kate Bush' });
  isSuccess(t, created, 'create kate');
  const kateId: number = created.body.user_id;
  const added = await poll();
  t.equal(added.length, 1, 'one event for the creation');
  t.match(added[0], {
    type: 'realm_user',
    op: 'add',
    id: Number,
    person: {
      user_id: kateId,
      email: 'kate@example.com',
      delivery_email: 'kate@example.com',
      full_name: 'Kate Bush',
      role: 400,
      is_admin: false,
      is_owner: false,
      is_guest: false,
      is_bot: false,
      is_active: true,
      date_joined: String,
      avatar_version: Number,
      timezone: String,
    },
  });
  t.hasOwnProps(added[0]?.person ?? {}, USER_FIELDS, 'the added person has every user field');
  const leoEvents = await poll(api.as(leo), leoQueue.queueId, -1);
  t.match(leoEvents, [{ type: 'realm_user', op: 'add', person: { user_id: kateId } }], 'other users of the realm see it too');

  isSuccess(t, await api.delete(`/users/${kateId}`), 'deactivate kate');
  const deactivated = await poll();
  t.equal(deactivated.length, 1, 'one event for the deactivation');
  t.match(deactivated[0], { type: 'realm_user', op: 'update' });
  t.same(deactivated[0]?.person, { user_id: kateId, is_active: false });

  isSuccess(t, await api.post(`/users/${kateId}/reactivate`), 'reactivate kate');
  const reactivated = await poll();
  t.equal(reactivated.length, 1, 'one event for the reactivation');
  t.match(reactivated[0], { type: 'realm_user', op: 'update' });
  t.same(reactivated[0]?.person, { user_id: kateId, is_active: true });

  isSuccess(t, await api.patch(`/users/${kateId}`, { full_name: 'Kate B.' }), 'rename kate');
  const renamed = await poll();
  t.equal(renamed.length, 1, 'one event for the rename (the same initials: her default avatar is the same picture)');
  t.match(renamed[0], { type: 'realm_user', op: 'update' });
  t.same(renamed[0]?.person, { user_id: kateId, full_name: 'Kate B.' });

  isSuccess(t, await api.patch(`/users/${kateId}`, { full_name: 'Kate' }), 'rename kate again');
  const newInitials = await poll();
  t.same(newInitials.map((event) => event.person), [{ user_id: kateId, full_name: 'Kate' }, {
    user_id: kateId, avatar_source: 'G', avatar_version: 1,
    avatar_url: `/user_avatars/default/${kateId}/K.svg?version=1`, avatar_url_medium: `/user_avatars/default/${kateId}/K.svg?version=1`,
  }], 'new initials: the default avatar\'s new URL follows');

  // A poll held before the write is completed by it.
  const held = api.get('/events', { queue_id: queueId, last_event_id: last }, { signal: AbortSignal.timeout(10_000) });
  await new Promise((resolve) => setTimeout(resolve, 100));
  isSuccess(t, await api.patch(`/users/${kateId}`, { role: 200 }), 'make kate an administrator');
  const heldResult = await held;
  isSuccess(t, heldResult, 'the held poll returns');
  const roleEvents: { id: number; type: string; op: string; person: unknown }[] = heldResult.body.events ?? [];
  t.equal(roleEvents.length, 1, 'one event for the role change');
  t.match(roleEvents[0], { type: 'realm_user', op: 'update' });
  t.same(roleEvents[0]?.person, { user_id: kateId, role: 200 });
  t.ok((roleEvents[0]?.id ?? -1) > last, 'event ids increase');
});

t.test('GET /users shows every change to the users at once, as each viewer may see them', async (t) => {
  const { api } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  const bob = await api.createUser('bob@example.com', 'Bob');
  const ownerId = (await api.get('/users/me')).body.user_id as number;
  type Member = { user_id: number; full_name: string; email: string; delivery_email: string | null; is_active: boolean };
  const members = async (viewer: ApiClient) => {
    const result = await viewer.get('/users');
    isSuccess(t, result, 'GET /users');
    return new Map((result.body.members as Member[]).map((member) => [member.user_id, member]));
  };
  const asAnn = api.as(ann);
  const asBob = api.as(bob);
  // Each viewer reads the list before every change, then sees the change the next time.
  t.equal((await members(asAnn)).get(bob.userId)?.full_name, 'Bob');
  isSuccess(t, await api.patch(`/users/${bob.userId}`, { full_name: 'Robert' }), 'rename bob');
  t.equal((await members(asAnn)).get(bob.userId)?.full_name, 'Robert', 'the new name');
  t.equal((await members(api)).get(bob.userId)?.full_name, 'Robert', 'for the owner too');

  t.equal((await members(asAnn)).get(bob.userId)?.delivery_email, 'bob@example.com');
  isSuccess(t, await asBob.patch('/settings', { email_address_visibility: 3 }), 'bob shows his address to administrators only');
  t.equal((await members(asAnn)).get(bob.userId)?.delivery_email, null, 'a member no longer reads it');
  t.match((await members(asAnn)).get(bob.userId)?.email, new RegExp(`^user${bob.userId}@`), 'the stand-in address');
  t.equal((await members(api)).get(bob.userId)?.delivery_email, 'bob@example.com', 'an administrator does');
  const bobSees = await members(asBob);
  t.equal(bobSees.get(bob.userId)?.delivery_email, 'bob@example.com', 'bob reads his own');
  t.equal(bobSees.get(ann.userId)?.delivery_email, 'ann@example.com', 'and the others as a member');
  t.equal(bobSees.get(ownerId)?.delivery_email, (await members(asAnn)).get(ownerId)?.delivery_email, 'as any member');

  const carol = await api.createUser('carol@example.com', 'Carol');
  t.equal((await members(asAnn)).get(carol.userId)?.full_name, 'Carol', 'a new user is listed');
  isSuccess(t, await api.delete(`/users/${carol.userId}`), 'deactivate carol');
  t.equal((await members(asAnn)).get(carol.userId)?.is_active, false, 'and shown deactivated');
});

t.test('GET /users/me carries max_message_id, the newest message the user can read (-1 before any)', async (t) => {
  const { api } = await startTestServer(t);
  const ann = await api.createUser('ann-max@example.com', 'Ann');
  t.equal((await api.as(ann).get('/users/me')).body.max_message_id, -1, 'none yet');
  const toAnn = await sendDirect(api, [ann.userId], 'hello Ann');
  await channel(api, 'owners only', []);
  const unseen = await sendToChannel(api, 'owners only', 'private', 'not for Ann');
  t.ok(unseen > toAnn);
  t.equal((await api.as(ann).get('/users/me')).body.max_message_id, toAnn, "a channel Ann is not in does not count");
  t.equal((await api.get('/users/me')).body.max_message_id, unseen, "the sender's newest");
});

t.test('max_message_id of a member of 600 channels follows sends, moves, deletions, snapshots and a restart', async (t) => {
  // Each channel's newest id is kept by a summary (newest-ids.ts ListNewest), read a slice a turn past 512.
  const first = await startTestServer(t, { rateLimit: null, messageKeyCache: 16 });
  const { api, server } = first;
  const ann = await api.createUser('ann-many@example.com', 'Ann');
  const names = Array.from({ length: 600 }, (_, i) => `channel ${i}`);
  t.equal((await api.post('/users/me/subscriptions', { subscriptions: names.map((name) => ({ name })), principals: [1, ann.userId] })).status, 200);
  const elsewhere = await channel(api, 'elsewhere', [1]);
  const maxOf = async (client: ApiClient) => {
    const me = (await client.get('/users/me')).body.max_message_id;
    const registered = (await client.register({ fetch_event_types: ['message'] })).body.max_message_id;
    return me === registered ? me : { me, registered };
  };
  const expect = async (expected: number, label: string, client = api.as(ann)) => t.equal(await maxOf(client), expected, label);

  await sendToChannel(api, 'channel 10', 't', 'one');
  await sendToChannel(api, 'channel 300', 't', 'two');
  const newest = await sendToChannel(api, 'channel 599', 't', 'three');
  await expect(newest, 'the newest of three channels');
  const dm = await sendDirect(api, [ann.userId], 'a word');
  await expect(dm, 'a direct message');
  const later = await sendToChannel(api, 'channel 599', 't', 'four');
  await expect(later, 'a channel read before, sent to again');
  const moved = await api.patch(`/messages/${later}`, { stream_id: elsewhere, propagate_mode: 'change_one', send_notification_to_old_thread: false, send_notification_to_new_thread: false });
  t.equal(moved.status, 200, JSON.stringify(moved.body));
  await expect(dm, 'its newest message moved to a channel Ann is not in');
  t.equal(await maxOf(api), later, 'the owner is in it');

  // A change read while unsaved, then another before a snapshot: the snapshot must not leave the first reading.
  const fifth = await sendToChannel(api, 'channel 42', 't', 'five');
  await expect(fifth, 'channel 42');
  const sixth = await sendToChannel(api, 'channel 42', 't', 'six');
  await server.runtime.snapshot();
  await expect(sixth, 'sent again, then a snapshot');
  t.equal((await api.delete(`/messages/${sixth}`)).status, 200);
  await expect(fifth, 'its newest deleted');
  await server.runtime.snapshot();
  await expect(fifth, 'after another snapshot');

  // A private channel whose history is not public to subscribers: what was sent before Ann joined is not hers.
  const secret = await channel(api, 'secret', [1], { invite_only: true, history_public_to_subscribers: false, send_new_subscription_messages: false });
  await sendToChannel(api, secret, 't', 'before Ann');
  t.equal((await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'secret' }], principals: [ann.userId], send_new_subscription_messages: false })).status, 200);
  await expect(fifth, 'a protected history: its newest message is not Ann\'s');
  const held = await sendToChannel(api, secret, 't', 'after Ann');
  await expect(held, 'one sent since she joined is');
  await first.stop();

  const second = await startTestServer(t, { dataDir: first.dataDir, rateLimit: null, messageKeyCache: 16 });
  t.equal(await maxOf(second.api.as(ann)), held, 'after a restart');
  const deleted = await second.api.delete(`/messages/${held}`);
  t.equal(deleted.status, 200, JSON.stringify(deleted.body));
  t.equal(await maxOf(second.api.as(ann)), fifth, 'after a restart and a deletion');
  t.equal(await maxOf(second.api), held - 1, "the owner's: the message before Ann joined");
});
