import { rmSync } from 'node:fs';
import t from 'tap';
import { MAX_PROFILE_FIELDS } from '../actors/realm/profile-fields/decide.ts';
import { Role } from '../actors/realm/state.ts';
import { drain, type Event } from './helpers/messages.ts';
import { startTestServer, tempDir, type ApiClient } from './helpers/server.ts';

const FIELDS = '/realm/profile_fields';
const fieldsOf = async (api: ApiClient) => (await api.get(FIELDS)).body.custom_fields as Record<string, unknown>[];
const withoutIds = (events: Event[]) => events.map(({ id: _id, ...event }) => event);

/** A server with an owner (the api), an administrator, a moderator and two members. */
async function organization(t: { teardown(fn: () => unknown): void }) {
  const server = await startTestServer(t);
  const { api } = server;
  const admin = await api.createUser('admin@example.com', 'Admin');
  const moderator = await api.createUser('moderator@example.com', 'Moderator');
  const ann = await api.createUser('ann@example.com', 'Ann');
  const bob = await api.createUser('bob@example.com', 'Bob');
  await api.patch(`/users/${admin.userId}`, { role: Role.administrator });
  await api.patch(`/users/${moderator.userId}`, { role: Role.moderator });
  return { server, api, admin: api.as(admin), moderator: api.as(moderator), ann: api.as(ann), bob: api.as(bob), ids: { admin, moderator, ann, bob } };
}

async function create(api: ApiClient, params: Record<string, unknown>): Promise<number> {
  const created = await api.post(FIELDS, params);
  if (created.status !== 200) throw new Error(`create failed: ${JSON.stringify(created.body)}`);
  return created.body.id;
}

/** One field of each of the eight types; returns their ids by type name. */
async function everyType(api: ApiClient) {
  return {
    phone: await create(api, { name: 'Phone', hint: 'Work phone', field_type: 1, required: true }),
    bio: await create(api, { name: 'Biography', field_type: 2 }),
    editor: await create(api, { name: 'Editor', field_type: 3, field_data: { vim: { text: 'Vim', order: '1' }, emacs: { text: 'Emacs', order: '2' } }, display_in_profile_summary: true }),
    birthday: await create(api, { name: 'Birthday', field_type: 4, editable_by_user: false }),
    website: await create(api, { name: 'Website', field_type: 5, display_in_profile_summary: true }),
    mentor: await create(api, { name: 'Mentor', field_type: 6 }),
    github: await create(api, { field_type: 7, field_data: { subtype: 'github' } }),
    pronouns: await create(api, { name: 'Pronouns', field_type: 8 }),
  };
}

t.test('administrators create fields of the eight types; everyone reads them in order', async (t) => {
  const { api, admin, moderator, ann } = await organization(t);
  for (const [who, client] of [['member', ann], ['moderator', moderator]] as const) {
    const refused = await client.post(FIELDS, { name: 'Phone', field_type: 1 });
    t.equal(refused.body.code, 'UNAUTHORIZED_PRINCIPAL', who);
    t.equal(refused.body.msg, 'Must be an organization administrator', who);
    t.equal((await client.post(FIELDS, { field_type: 'x' })).body.code, 'UNAUTHORIZED_PRINCIPAL', `${who}: refused before the parameters are read`);
  }
  const ids = await everyType(admin);
  const fields = await fieldsOf(ann);
  t.same(fields.map((field) => field.id), Object.values(ids), 'in creation order');
  t.same(fields[0], { id: ids.phone, name: 'Phone', type: 1, hint: 'Work phone', field_data: '', order: ids.phone, required: true, editable_by_user: true });
  t.same(fields[2], {
    id: ids.editor, name: 'Editor', type: 3, hint: '', field_data: '{"vim":{"text":"Vim","order":"1"},"emacs":{"text":"Emacs","order":"2"}}',
    order: ids.editor, required: false, editable_by_user: true, display_in_profile_summary: true,
  }, 'field data as JSON text; display_in_profile_summary only when true');
  t.match(fields[3], { name: 'Birthday', editable_by_user: false });
  t.match(fields[6], { name: 'GitHub', hint: 'Enter your GitHub username', type: 7, field_data: '{"subtype":"github"}' }, 'a well-known account brings its label');
  t.same(fields.map((field) => field.type), [1, 2, 3, 4, 5, 6, 7, 8]);
  t.equal((await api.post(FIELDS, { name: 'Handle', field_type: 7, field_data: { subtype: 'custom', url_pattern: 'https://example.com/u/%(username)s' } })).status, 200, 'a custom account');

  const registered = (await ann.register({ fetch_event_types: ['custom_profile_fields'] })).body;
  t.same(registered.custom_profile_fields, await fieldsOf(ann), 'registration holds the same list');
  t.same(registered.custom_profile_field_types.SHORT_TEXT, { id: 1, name: 'Short text' });
  t.same(registered.custom_profile_field_types.USER, { id: 6, name: 'Person picker' });
  t.equal(Object.keys(registered.custom_profile_field_types).length, 8);
});

t.test('field definitions are checked per type', async (t) => {
  const { api } = await startTestServer(t);
  await create(api, { name: 'Taken', field_type: 1, display_in_profile_summary: true });
  await create(api, { name: 'Also shown', field_type: 8, display_in_profile_summary: true });
  const options = (extra: Record<string, unknown>) => ({ name: 'Choice', field_type: 3, field_data: extra });
  const bad: [Record<string, unknown>, string][] = [
    [{ name: '  ', field_type: 1 }, 'Label cannot be blank.'],
    [{ name: 'x'.repeat(41), field_type: 1 }, 'Label cannot be longer than 40 characters.'],
    [{ name: 'Hinted', hint: 'x'.repeat(81), field_type: 1 }, 'Help text cannot be longer than 80 characters.'],
    [{ name: 'Odd', field_type: 9 }, 'Invalid field type.'],
    [{ name: 'Taken', field_type: 2 }, 'A field with that label already exists.'],
    [options({}), 'Field must have at least one choice.'],
    [options({ a: { text: 'A', order: '1' }, b: { text: 'A', order: '2' } }), 'Field must not have duplicate choices.'],
    [options({ a: { text: 'A' } }), 'order key is missing from field_data["a"]'],
    [options({ a: { text: ' ', order: '1' } }), 'field_data["a"]["text"] cannot be blank.'],
    [options({ a: { text: 'A', order: 1 } }), 'field_data["a"]["order"] is not a string'],
    [options({ ' ': { text: 'A', order: '1' } }), "'value' cannot be blank."],
    [options({ a: 'A' }), 'field_data["a"] is not a dict'],
    [{ name: 'Account', field_type: 7, field_data: { subtype: 'myspace' } }, 'Invalid external account type'],
    [{ name: 'Account', field_type: 7, field_data: { subtype: 'custom' } }, 'Custom external account must define URL pattern'],
    [{ name: 'Account', field_type: 7, field_data: { subtype: 'custom', url_pattern: 'https://example.com/' } }, 'Malformed URL pattern.'],
    [{ name: 'Account', field_type: 7, field_data: {} }, 'subtype key is missing from field_data'],
    [{ name: 'Third', field_type: 1, display_in_profile_summary: true }, 'Only 2 custom profile fields can be displayed in the profile summary.'],
    [{ name: 'Phone', field_type: 1, field_data: 'x' }, '"field_data" is not valid JSON.'],
  ];
  for (const [params, msg] of bad) {
    const refused = await api.post(FIELDS, params);
    t.equal(refused.body.code, 'BAD_REQUEST', JSON.stringify(params));
    t.equal(refused.body.msg, msg, JSON.stringify(params));
  }
  const shown = (await fieldsOf(api)).filter((field) => field.display_in_profile_summary).map((field) => field.id);
  await api.patch(`${FIELDS}/${shown[1]}`, { display_in_profile_summary: false });
  t.equal((await api.post(FIELDS, { name: 'Long', field_type: 2, display_in_profile_summary: true })).body.msg, 'Field type not supported for display in profile summary.', 'never long text');
  t.equal((await api.post(FIELDS, { name: 'Person', field_type: 6, display_in_profile_summary: true })).body.msg, 'Field type not supported for display in profile summary.', 'nor a person picker');
  t.equal((await fieldsOf(api)).length, 2, 'no refused field was made');
});

t.test('edit, reorder and delete fields; everyone gets the whole list each time', async (t) => {
  const { api, admin, ann, ids: users } = await organization(t);
  const ids = await everyType(api);
  const queues = await Promise.all([api, ann].map(async (client) => ({ client, queueId: (await client.register({ event_types: ['custom_profile_fields'] })).queueId })));

  for (const [method, path, params] of [['PATCH', `${FIELDS}/${ids.phone}`, { name: 'Mobile' }], ['PATCH', FIELDS, { order: [1] }], ['DELETE', `${FIELDS}/${ids.phone}`, {}]] as const) {
    t.equal((await ann.request(method, path, params)).body.code, 'UNAUTHORIZED_PRINCIPAL', `member: ${method} ${path}`);
  }

  t.equal((await admin.patch(`${FIELDS}/${ids.phone}`, { name: 'Mobile', hint: 'Call me', required: false, editable_by_user: false })).status, 200);
  t.match((await fieldsOf(ann))[0], { name: 'Mobile', hint: 'Call me', required: false, editable_by_user: false });
  t.equal((await admin.patch(`${FIELDS}/${ids.phone}`, { name: 'Biography' })).body.msg, 'A field with that label already exists.');
  t.equal((await admin.patch(`${FIELDS}/999`, { name: 'X' })).body.msg, 'Field id 999 not found.');
  t.equal((await admin.patch(`${FIELDS}/${ids.github}`, { name: 'Git' })).body.msg, 'Default custom field cannot be updated.');
  t.equal((await admin.patch(`${FIELDS}/${ids.phone}`, { display_in_profile_summary: true })).body.msg, 'Only 2 custom profile fields can be displayed in the profile summary.');
  t.equal((await admin.patch(`${FIELDS}/${ids.editor}`, { display_in_profile_summary: true })).status, 200, 'a field already shown may say so again');

  const order = Object.values(ids).reverse();
  for (const wrong of [order.slice(1), [...order.slice(1), 999], [...order.slice(1), order[1]!]]) {
    t.equal((await admin.patch(FIELDS, { order: wrong })).body.msg, 'Invalid order mapping.', JSON.stringify(wrong));
  }
  t.equal((await admin.patch(FIELDS, { order })).status, 200);
  const reordered = await fieldsOf(ann);
  t.same(reordered.map((field) => field.id), order);
  t.same(reordered.map((field) => field.order), order.map((_, index) => index));

  // A list field that loses an option loses the values that chose it.
  await ann.patch('/users/me/profile_data', { data: [{ id: ids.editor, value: 'emacs' }] });
  await api.as(users.bob).patch('/users/me/profile_data', { data: [{ id: ids.editor, value: 'vim' }] });
  t.equal((await admin.patch(`${FIELDS}/${ids.editor}`, { field_data: { vim: { text: 'Vim', order: '1' }, nano: { text: 'Nano', order: '2' } } })).status, 200);
  const profiles = (await api.get('/users', { include_custom_profile_fields: true })).body.members;
  const profileOf = (id: number) => profiles.find((person: { user_id: number }) => person.user_id === id).profile_data;
  t.same(profileOf(users.ann.userId), {}, "ann's emacs is gone");
  t.same(profileOf(users.bob.userId), { [ids.editor]: { value: 'vim' } }, "bob's vim stays");

  await ann.patch('/users/me/profile_data', { data: [{ id: ids.pronouns, value: 'she/her' }] });
  t.equal((await admin.delete(`${FIELDS}/${ids.pronouns}`)).status, 200);
  t.equal((await admin.delete(`${FIELDS}/${ids.pronouns}`)).body.msg, `Field id ${ids.pronouns} not found.`);
  t.notOk((await fieldsOf(ann)).some((field) => field.id === ids.pronouns));
  t.same((await ann.get('/users/me')).body.profile_data, {}, 'its values went with it');

  for (const { client, queueId } of queues) {
    const events = (await drain(client, queueId)).filter((event) => event.type === 'custom_profile_fields');
    t.equal(events.length, 5, `${client.credentials!.email}: rename, the repeated summary flag, reorder, new options, delete`);
    t.same(events[events.length - 1]!.fields, await fieldsOf(api), 'each event carries the whole list as it now is');
    t.same((events[2]!.fields as { id: number }[]).map((field) => field.id), order, 'the reorder event lists the new order');
  }
});

t.test("users' values: checked per type, rendered for text, announced to everyone", async (t) => {
  const { api, admin, ann, bob, ids: users } = await organization(t);
  const ids = await everyType(api);
  const gone = await api.createUser('gone@example.com', 'Gone');
  await api.delete(`/users/${gone.userId}`);
  const { queueId } = await bob.register({ event_types: ['realm_user'] });
  const set = (client: ApiClient, id: number, value: unknown) => client.patch('/users/me/profile_data', { data: [{ id, value }] });

  const bad: [number, unknown, string][] = [
    [ids.phone, 'x'.repeat(51), 'Phone is too long (limit: 50 characters)'],
    [ids.phone, 5, 'Phone is not a string'],
    [ids.bio, 'x'.repeat(501), 'Biography is too long (limit: 500 characters)'],
    [ids.editor, 'nano', "'nano' is not a valid choice for 'Editor'."],
    [ids.birthday, '2024-02-30', 'You are not allowed to change this field. Contact an administrator to update it.'],
    [ids.website, 'not a link', 'Website is not a URL'],
    [ids.website, 'javascript:alert(1)', 'Website is not a URL'],
    [ids.mentor, 'bob', 'User IDs is not a list'],
    [ids.mentor, [999], 'Invalid user ID: 999'],
    [ids.mentor, [gone.userId], `User with ID ${gone.userId} is deactivated`],
    [ids.github, 'y'.repeat(51), 'GitHub is too long (limit: 50 characters)'],
    [ids.pronouns, 'z'.repeat(51), 'Pronouns is too long (limit: 50 characters)'],
    [999, 'x', 'Field id 999 not found.'],
  ];
  for (const [id, value, msg] of bad) {
    const refused = await set(ann, id, value);
    t.equal(refused.body.code, 'BAD_REQUEST', msg);
    t.equal(refused.body.msg, msg);
  }
  for (const [value, msg] of [['2024-02-30', 'Birthday is not a date'], ['24-1-1', 'Birthday is not a date']] as const) {
    t.equal((await set(admin, ids.birthday, value)).body.msg, msg, `an administrator's own date: ${value}`);
  }
  t.same(await drain(bob, queueId), [], 'nothing announced');

  const good: [number, unknown][] = [
    [ids.phone, 'x'.repeat(50)], [ids.bio, '**Hello**'], [ids.editor, 'emacs'], [ids.website, 'https://example.com/me'],
    [ids.mentor, [users.bob.userId, 1]], [ids.github, 'ann-gh'], [ids.pronouns, 'she/her'],
  ];
  const all = await ann.patch('/users/me/profile_data', { data: good.map(([id, value]) => ({ id, value })) });
  t.equal(all.status, 200, JSON.stringify(all.body));
  t.equal((await set(admin, ids.birthday, '2024-02-29')).status, 200, 'a leap day; administrators edit fields users may not');

  const events = withoutIds(await drain(bob, queueId));
  t.same(events.slice(0, 3), [
    { type: 'realm_user', op: 'update', person: { user_id: users.ann.userId, custom_profile_field: { id: ids.phone, value: 'x'.repeat(50), rendered_value: `<p>${'x'.repeat(50)}</p>` } } },
    { type: 'realm_user', op: 'update', person: { user_id: users.ann.userId, custom_profile_field: { id: ids.bio, value: '**Hello**', rendered_value: '<p><strong>Hello</strong></p>' } } },
    { type: 'realm_user', op: 'update', person: { user_id: users.ann.userId, custom_profile_field: { id: ids.editor, value: 'emacs' } } },
  ], 'text fields carry their rendering; others do not');
  t.same(events[4], { type: 'realm_user', op: 'update', person: { user_id: users.ann.userId, custom_profile_field: { id: ids.mentor, value: `[${users.bob.userId},1]` } } });
  t.equal(events.length, 8, 'one per field, to another member too');

  const profile = (await ann.get('/users/me')).body.profile_data;
  t.same(profile[ids.bio], { value: '**Hello**', rendered_value: '<p><strong>Hello</strong></p>' });
  t.same(profile[ids.mentor], { value: `[${users.bob.userId},1]` });
  t.equal(Object.keys(profile).length, 7);

  t.equal((await set(ann, ids.github, 'ann-gh')).status, 200);
  t.same(await drain(bob, queueId), [], 'the same value again: no event');

  t.equal((await ann.delete('/users/me/profile_data', { data: [ids.github, ids.website] })).status, 200);
  t.same(withoutIds(await drain(bob, queueId)).map((event) => (event.person as { custom_profile_field: unknown }).custom_profile_field), [
    { id: ids.github, value: null },
    { id: ids.website, value: null },
  ]);
  t.equal((await ann.delete('/users/me/profile_data', { data: [ids.github] })).status, 200, 'clearing a value not set is fine');
  t.same(await drain(bob, queueId), [], 'and says nothing');
  t.equal((await ann.delete('/users/me/profile_data', { data: [999] })).body.msg, 'Field id 999 not found.');
  t.equal((await ann.delete('/users/me/profile_data', { data: [ids.birthday] })).body.msg, 'You are not allowed to change this field. Contact an administrator to update it.');
});

t.test("administrators edit anyone's values through PATCH /users/{user_id}; members only their own", async (t) => {
  const { admin, ann, bob, ids: users, api } = await organization(t);
  const ids = await everyType(api);
  const edit = await admin.patch(`/users/${users.ann.userId}`, { profile_data: [{ id: ids.birthday, value: '1990-05-17' }, { id: ids.phone, value: '555' }] });
  t.equal(edit.status, 200, JSON.stringify(edit.body));
  t.same((await api.get(`/users/${users.ann.userId}`, { include_custom_profile_fields: true })).body.user.profile_data, {
    [ids.phone]: { value: '555', rendered_value: '<p>555</p>' },
    [ids.birthday]: { value: '1990-05-17' },
  });
  t.notOk('profile_data' in (await api.get(`/users/${users.ann.userId}`)).body.user, 'only when asked for');
  t.equal((await admin.patch(`/users/${users.ann.userId}`, { profile_data: [{ id: ids.phone, value: '' }, { id: ids.birthday, value: null }] })).status, 200);
  t.same((await ann.get('/users/me')).body.profile_data, {}, 'an empty value clears the field');
  t.equal((await admin.patch(`/users/${users.ann.userId}`, { profile_data: [{ id: ids.website, value: 'nope' }] })).body.msg, 'Website is not a URL');

  const refused = await bob.patch(`/users/${users.ann.userId}`, { profile_data: [{ id: ids.phone, value: '666' }] });
  t.equal(refused.body.code, 'UNAUTHORIZED_PRINCIPAL', "a member cannot set another's values");
  t.equal((await bob.patch(`/users/${users.bob.userId}`, { profile_data: [{ id: ids.phone, value: '777' }] })).status, 200, 'but may set their own this way');
  t.equal((await bob.patch(`/users/${users.bob.userId}`, { profile_data: [{ id: ids.birthday, value: '2000-01-01' }] })).body.msg,
    'You are not allowed to change this field. Contact an administrator to update it.');

  const registered = (await ann.register({ fetch_event_types: ['realm_user'] })).body;
  const bobView = registered.realm_users.find((person: { user_id: number }) => person.user_id === users.bob.userId);
  t.same(bobView.profile_data, { [ids.phone]: { value: '777', rendered_value: '<p>777</p>' } }, 'registration shows the values');
  const listed = (await ann.get('/users')).body.members;
  t.notOk(listed.some((person: Record<string, unknown>) => 'profile_data' in person), 'GET /users without include_custom_profile_fields leaves them out');
});

t.test('fields and values survive a restart', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await startTestServer(t, { dataDir });
  const ann = await first.api.createUser('ann@example.com', 'Ann');
  const ids = await everyType(first.api);
  await first.api.patch(FIELDS, { order: Object.values(ids).reverse() });
  await first.api.as(ann).patch('/users/me/profile_data', { data: [{ id: ids.bio, value: '_hi_' }, { id: ids.mentor, value: [1] }] });
  const fields = await fieldsOf(first.api);
  await first.stop();

  const second = await startTestServer(t, { dataDir });
  t.same(await fieldsOf(second.api), fields, 'the same fields in the same order');
  t.same((await second.api.as(ann).get('/users/me')).body.profile_data, {
    [ids.bio]: { value: '_hi_', rendered_value: '<p><em>hi</em></p>' },
    [ids.mentor]: { value: '[1]' },
  });
  t.equal(await create(second.api, { name: 'After', field_type: 1 }), ids.pronouns + 1, 'ids continue');
});

t.test('an organization has at most MAX_PROFILE_FIELDS custom profile fields; a deleted one makes room', async (t) => {
  const { api } = await startTestServer(t, { rateLimit: null });
  let last = 0;
  for (let i = 0; i < MAX_PROFILE_FIELDS; i++) {
    const { status, body } = await api.post(FIELDS, { name: `Field ${i}`, field_type: 1 });
    if (status !== 200) t.fail(`field ${i}: ${JSON.stringify(body)}`);
    last = body.id;
  }
  const over = await api.post(FIELDS, { name: 'One more', field_type: 1 });
  t.same([over.status, over.body.msg], [400, `This organization already has ${MAX_PROFILE_FIELDS} custom profile fields, the most it may have`]);
  t.equal((await api.patch(`${FIELDS}/${last}`, { name: 'Renamed' })).status, 200, 'at the bound, a field is still edited');
  t.equal((await api.delete(`${FIELDS}/${last}`)).status, 200);
  t.equal((await api.post(FIELDS, { name: 'One more', field_type: 1 })).status, 200, 'a deleted field makes room');
  t.equal((await fieldsOf(api)).length, MAX_PROFILE_FIELDS);
});
