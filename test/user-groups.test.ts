import t from 'tap';
import { startTestServer } from './helpers/server.ts';

t.test('system groups mirror roles', async (t) => {
  const { api } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  const groups = (await api.get('/user_groups')).body.user_groups as { id: number; name: string; members: number[]; direct_subgroup_ids: number[]; is_system_group: boolean }[];
  const byName = new Map(groups.map((g) => [g.name, g]));
  for (const name of ['role:nobody', 'role:owners', 'role:administrators', 'role:moderators', 'role:fullmembers', 'role:members', 'role:everyone', 'role:internet']) {
    t.ok(byName.get(name)?.is_system_group, `${name} exists as a system group`);
  }
  t.same(byName.get('role:owners')!.members, [1]);
  t.same(byName.get('role:members')!.members, [ann.userId]);
  t.same(byName.get('role:administrators')!.direct_subgroup_ids, [byName.get('role:owners')!.id]);
  const everyone = byName.get('role:everyone')!.id;
  t.same((await api.get(`/user_groups/${everyone}/members`)).body.members, [1, ann.userId], 'everyone holds both through subgroups');
  t.same((await api.get(`/user_groups/${everyone}/members`, { direct_member_only: true })).body.members, [], 'no guests');

  await api.patch(`/users/${ann.userId}`, { role: 300 });
  const moderators = (await api.get('/user_groups')).body.user_groups.find((g: { name: string }) => g.name === 'role:moderators');
  t.same(moderators.members, [ann.userId], 'a role change moves the user between role groups');
  const edit = await api.post(`/user_groups/${moderators.id}/members`, { add: [1] });
  t.equal(edit.body.code, 'BAD_REQUEST', 'system groups are not edited through the group endpoints');
});

t.test('user groups: create, edit, members, subgroups, cycles, deactivation, events', async (t) => {
  const { api } = await startTestServer(t);
  const ann = await api.createUser('ann@example.com', 'Ann');
  const bob = await api.createUser('bob@example.com', 'Bob');
  const { queueId } = await api.as(bob).register({ event_types: ['user_group'], client_capabilities: { include_deactivated_groups: true } });
  const { queueId: legacyQueue } = await api.as(bob).register({ event_types: ['user_group'] });

  const created = await api.as(ann).post('/user_groups/create', { name: 'backend', description: 'Backend team', members: [ann.userId] });
  t.equal(created.status, 200, JSON.stringify(created.body));
  const backend = created.body.group_id;
  const frontend = (await api.as(ann).post('/user_groups/create', { name: 'frontend', description: '', members: [bob.userId] })).body.group_id;

  t.match((await api.post('/user_groups/create', { name: 'backend', description: '', members: [] })).body.msg, /already exists/);
  t.match((await api.post('/user_groups/create', { name: 'role:x', description: '', members: [] })).body.msg, /cannot start with/);
  t.match((await api.post('/user_groups/create', { name: 'ghosts', description: '', members: [999] })).body.msg, /Invalid user ID: 999/);
  t.equal((await api.post('/user_groups/create', { name: 'x', description: '' })).body.code, 'REQUEST_VARIABLE_MISSING');

  // The creator manages its group; another member may not.
  t.equal((await api.as(bob).patch(`/user_groups/${backend}`, { description: 'no' })).body.code, 'UNAUTHORIZED_PRINCIPAL');
  t.equal((await api.as(ann).patch(`/user_groups/${backend}`, { description: 'Servers' })).status, 200);
  t.equal((await api.as(bob).post(`/user_groups/${backend}/members`, { add: [bob.userId] })).body.code, 'UNAUTHORIZED_PRINCIPAL', 'joining needs can_join_group');
  t.equal((await api.as(ann).post(`/user_groups/${backend}/members`, { add: [bob.userId] })).status, 200);
  t.match((await api.as(ann).post(`/user_groups/${backend}/members`, { add: [bob.userId] })).body.msg, /already a member/);
  t.equal((await api.as(bob).post(`/user_groups/${backend}/members`, { delete: [bob.userId] })).status, 200, 'anyone may leave (can_leave_group)');
  t.match((await api.as(ann).post(`/user_groups/${backend}/members`, { delete: [bob.userId] })).body.msg, /no member/);

  // Subgroups, and the cycle they must never make. The owner is an administrator: it manages every group.
  t.equal((await api.post(`/user_groups/${backend}/subgroups`, { add: [frontend] })).status, 200);
  t.same((await api.get(`/user_groups/${backend}/members`)).body.members, [ann.userId, bob.userId], 'members through the subgroup');
  t.same((await api.get(`/user_groups/${backend}/members`, { direct_member_only: true })).body.members, [ann.userId]);
  t.same((await api.get(`/user_groups/${backend}/members/${bob.userId}`)).body, { result: 'success', msg: '', is_user_group_member: true });
  t.match((await api.post(`/user_groups/${frontend}/subgroups`, { add: [backend] })).body.msg, /cycle/);
  t.same((await api.get(`/user_groups/${backend}/subgroups`)).body.subgroups, [frontend]);

  // A group named by a permission cannot be deactivated; a free one can.
  await api.patch(`/user_groups/${backend}`, { can_mention_group: { new: frontend } });
  const refused = await api.post(`/user_groups/${frontend}/deactivate`);
  t.equal(refused.body.code, 'CANNOT_DEACTIVATE_GROUP_IN_USE');
  t.match(refused.body.objections, [{ type: 'user_group', group_id: backend, settings: ['can_mention_group'] }]);
  t.match((await api.patch(`/user_groups/${backend}`, { can_mention_group: { old: 1, new: 2 } })).body.msg, /does not match/);
  t.equal((await api.post(`/user_groups/${backend}/deactivate`)).status, 200);
  const active = (await api.get('/user_groups')).body.user_groups.map((g: { id: number }) => g.id);
  t.notOk(active.includes(backend), 'deactivated groups are hidden by default');
  t.ok((await api.get('/user_groups', { include_deactivated_groups: true })).body.user_groups.some((g: { id: number; deactivated: boolean }) => g.id === backend && g.deactivated));

  const events = (await api.as(bob).get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true })).body.events;
  t.match(events, [
    { type: 'user_group', op: 'add', group: { id: backend, name: 'backend', members: [ann.userId] } },
    { type: 'user_group', op: 'add', group: { id: frontend, name: 'frontend' } },
    { type: 'user_group', op: 'update', group_id: backend, data: { description: 'Servers' } },
    { type: 'user_group', op: 'add_members', group_id: backend, user_ids: [bob.userId] },
    { type: 'user_group', op: 'remove_members', group_id: backend, user_ids: [bob.userId] },
    { type: 'user_group', op: 'add_subgroups', group_id: backend, direct_subgroup_ids: [frontend] },
    { type: 'user_group', op: 'update', group_id: backend, data: { can_mention_group: frontend } },
    { type: 'user_group', op: 'update', group_id: backend, data: { deactivated: true } },
  ]);
  t.equal(events.length, 8, 'refused requests announce nothing');
  // Without include_deactivated_groups, a deactivation arrives as a removal.
  const legacy = (await api.as(bob).get('/events', { queue_id: legacyQueue, last_event_id: -1, dont_block: true })).body.events;
  t.match(legacy.at(-1), { type: 'user_group', op: 'remove', group_id: backend });
  t.equal(legacy.length, 8);
});

t.test('groups survive a restart', async (t) => {
  const first = await startTestServer(t);
  const created = await first.api.post('/user_groups/create', { name: 'kept', description: 'd', members: [1] });
  await first.stop();
  const second = await startTestServer(t, { dataDir: first.dataDir });
  const group = (await second.api.get('/user_groups')).body.user_groups.find((g: { id: number }) => g.id === created.body.group_id);
  t.match(group, { name: 'kept', description: 'd', members: [1], can_manage_group: { direct_members: [1], direct_subgroups: [] } });
});
