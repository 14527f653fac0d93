import t from 'tap';
import { channel } from './helpers/messages.ts';
import { startTestServer, type ApiClient } from './helpers/server.ts';

/**
 * Registration's `realm_users` and `realm_non_active_users` are serialized once per realm change for every
 * viewer of a role and shared (realm/user-directory.ts), and `user_status` once per change of the realm or of
 * a user's personal state. Each registration must still show what that viewer may see now: the lists one user
 * at a time (GET /users with `user_ids`, made per request), after every change.
 */

type User = Record<string, unknown> & { user_id: number; is_active: boolean };

async function registeredLists(client: ApiClient, params: Record<string, unknown> = {}) {
  const { body } = await client.register({ fetch_event_types: JSON.stringify(['realm_user']), event_types: JSON.stringify(['realm_user']), ...params });
  return { active: body.realm_users as User[], inactive: body.realm_non_active_users as User[] };
}

/** The same viewer's lists, each user made for this request alone. */
async function expectedLists(client: ApiClient, params: Record<string, unknown> = {}) {
  const ids = ((await client.get('/users')).body.members as User[]).map((user) => user.user_id);
  const users = (await client.get('/users', { user_ids: JSON.stringify(ids), include_custom_profile_fields: true, ...params })).body.members as User[];
  return { active: users.filter((user) => user.is_active), inactive: users.filter((user) => !user.is_active) };
}

t.test("registration's user lists are each viewer's own, and follow each change", async (t) => {
  const { api } = await startTestServer(t, { rateLimit: null });
  const ann = await api.createUser('ann@example.com', 'Ann');
  const bob = await api.createUser('bob@example.com', 'Bob');
  const cy = await api.createUser('cy@example.com', 'Cy');
  // Cy's address is for nobody but Cy: the members' shared list has it null, Cy's own answer has it.
  t.equal((await api.as(cy).patch('/settings', { email_address_visibility: 4 })).status, 200);
  const field = await api.post('/realm/profile_fields', { name: 'Team', field_type: 1, hint: '' });
  t.equal(field.status, 200);
  await api.as(ann).patch('/users/me/profile_data', { data: JSON.stringify([{ id: field.body.id, value: 'Blue' }]) });

  const viewers = new Map([['the owner', api], ['Ann', api.as(ann)], ['Bob', api.as(bob)], ['Cy', api.as(cy)]]);
  const check = async (label: string) => {
    for (const [name, client] of viewers) {
      for (const params of [{}, { client_extavatar: false }]) {
        const expected = await expectedLists(client, params);
        t.same(await registeredLists(client, params), expected, `${label}: ${name}${'client_extavatar' in params ? ', client_extavatar false' : ''}`);
      }
    }
  };
  await check('at first');
  const members = await registeredLists(api.as(bob));
  t.equal(members.active.find((user) => user.user_id === cy.userId)?.delivery_email, null, "a member does not read Cy's address");
  t.equal((await registeredLists(api.as(cy))).active.find((user) => user.user_id === cy.userId)?.delivery_email, 'cy@example.com', 'Cy reads its own');
  t.same(members.active.find((user) => user.user_id === ann.userId)?.profile_data, { [field.body.id]: { value: 'Blue', rendered_value: '<p>Blue</p>' } }, 'profile data in the list');

  t.equal((await api.delete(`/users/${bob.userId}`)).status, 200);
  viewers.delete('Bob');
  await check('Bob deactivated');
  const after = await registeredLists(api.as(ann));
  t.ok(after.inactive.some((user) => user.user_id === bob.userId) && !after.active.some((user) => user.user_id === bob.userId), 'Bob moved to realm_non_active_users');

  t.equal((await api.patch(`/users/${ann.userId}`, { full_name: 'Ann Lee' })).status, 200);
  t.equal((await api.patch(`/users/${cy.userId}`, { role: 200 })).status, 200);
  await check('Ann renamed, Cy an administrator');
  t.equal((await registeredLists(api.as(ann))).active.find((user) => user.user_id === ann.userId)?.full_name, 'Ann Lee');

  t.equal((await api.post(`/users/${bob.userId}/reactivate`)).status, 200);
  viewers.set('Bob', api.as(bob));
  await check('Bob reactivated');
});

t.test('a registration with parameters this server does not take lists them, in the answer written as bytes or as text', async (t) => {
  const { api } = await startTestServer(t, { rateLimit: null });
  await api.createUser('ann@example.com', 'Ann');
  for (const names of [['client_gravatar'], ['client_gravatar', 'zählen']]) {
    const params = Object.fromEntries(names.map((name) => [name, 'true']));
    const { body } = await api.register({ fetch_event_types: JSON.stringify(['realm_user']), ...params });
    t.same(body.ignored_parameters_unsupported, names, names.join(', '));
    t.same((body.realm_users as User[]).map((user) => user.full_name).sort(), ['Ann', 'Owner'].sort(), 'with the state');
  }
});

t.test("registration's statuses follow each user's changes", async (t) => {
  const { api } = await startTestServer(t, { rateLimit: null });
  const ann = await api.createUser('ann@example.com', 'Ann');
  const bob = await api.createUser('bob@example.com', 'Bob');
  const statuses = async () => (await api.as(bob).register({ fetch_event_types: JSON.stringify(['user_status']) })).body.user_status;
  t.same(await statuses(), {}, 'nobody has said anything');
  t.equal((await api.as(ann).post('/users/me/status', { status_text: 'on leave' })).status, 200);
  t.same(await statuses(), { [ann.userId]: { status_text: 'on leave' } });
  t.same(await statuses(), { [ann.userId]: { status_text: 'on leave' } }, 'again, unchanged');
  t.equal((await api.as(ann).patch('/settings', { presence_enabled: false })).status, 200);
  t.same(await statuses(), { [ann.userId]: { status_text: 'on leave', away: true } }, 'a setting of the personal state');
  t.equal((await api.as(ann).post('/users/me/status', { status_text: '' })).status, 200);
  t.same(await statuses(), { [ann.userId]: { away: true } });
  t.equal((await api.delete(`/users/${ann.userId}`)).status, 200);
  t.same(await statuses(), {}, 'a deactivated user is left out');
  t.equal((await api.post(`/users/${ann.userId}/reactivate`)).status, 200);
  t.same(await statuses(), { [ann.userId]: { away: true } }, 'and back with its reactivation');
});

// Subscriber lists are made per registration; kept per realm version they saved nothing measurable (the
// serialization is the cost: 2026-11-29, 21 channels of 10,000 users). This holds them to the same rule.
t.test("registration's subscribers follow each subscription change", async (t) => {
  const { api } = await startTestServer(t, { rateLimit: null });
  const ann = await api.createUser('ann@example.com', 'Ann');
  const bob = await api.createUser('bob@example.com', 'Bob');
  const general = await channel(api, 'general', [1, ann.userId]);
  await channel(api, 'other', [1]);
  const seen = async () => {
    const { body } = await api.as(ann).register({ fetch_event_types: JSON.stringify(['subscription']), include_subscribers: true });
    const subscribed = (body.subscriptions as { stream_id: number; subscribers: number[] }[]).find((s) => s.stream_id === general)?.subscribers;
    const members = (await api.get(`/streams/${general}/members`)).body.subscribers as number[];
    t.same(subscribed, members, 'the registration and GET /streams/{id}/members agree');
    const never = (body.never_subscribed as { name: string; subscribers: number[] }[]).find((s) => s.name === 'other')?.subscribers;
    return { general: subscribed, other: never };
  };
  t.same(await seen(), { general: [1, ann.userId], other: [1] });
  t.equal((await api.post('/users/me/subscriptions', { subscriptions: JSON.stringify([{ name: 'general' }]), principals: JSON.stringify([bob.userId]) })).status, 200);
  t.same(await seen(), { general: [1, ann.userId, bob.userId], other: [1] }, 'Bob subscribed');
  t.equal((await api.delete('/users/me/subscriptions', { subscriptions: JSON.stringify(['general']), principals: JSON.stringify([1]) })).status, 200);
  t.same(await seen(), { general: [ann.userId, bob.userId], other: [1] }, 'the owner left');
  t.equal((await api.post('/users/me/subscriptions', { subscriptions: JSON.stringify([{ name: 'other' }]), principals: JSON.stringify([bob.userId]) })).status, 200);
  t.same(await seen(), { general: [ann.userId, bob.userId], other: [1, bob.userId] }, 'a channel Ann is not in');
});
