import t from 'tap';
import { rmSync } from 'node:fs';
import { startTestServer, tempDir, type ApiClient } from './helpers/server.ts';

interface DraftView {
  id: number;
  type: string;
  to: number[];
  topic: string;
  content: string;
  timestamp: number;
}

/** Creates a channel with the given subscribers and returns its id. */
async function createChannel(api: ApiClient, name: string, subscribers: number[], inviteOnly = false): Promise<number> {
  const created = await api.post('/channels/create', { name, subscribers, invite_only: inviteOnly });
  if (typeof created.body.id !== 'number') throw new Error(`channel not created: ${JSON.stringify(created.body)}`);
  return created.body.id;
}

const poll = async (api: ApiClient, queueId: string) =>
  (await api.get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true })).body.events as { type: string }[];

t.test('drafts: create, list, edit, delete, with events to the owner only', async (t) => {
  const { api } = await startTestServer(t);
  const bob = await api.createUser('bob@example.com', 'Bob');
  const carol = await api.createUser('carol@example.com', 'Carol');
  const me = (await api.get('/users/me')).body.user_id as number;
  const design = await createChannel(api, 'design', [me]);
  const ops = await createChannel(api, 'ops', [me]);
  const { queueId } = await api.register({ event_types: ['drafts'] });
  const bobQueue = (await api.as(bob).register({ event_types: ['drafts'] })).queueId;

  const created = await api.post('/drafts', {
    drafts: [
      { type: 'stream', to: [design], topic: 'sync drafts', content: 'Channel draft\n\n', timestamp: 1595479019 },
      { type: 'private', to: [carol.userId, bob.userId, me, bob.userId], topic: 'ignored', content: 'Group draft', timestamp: 1595479020.7 },
      { type: 'private', to: [me], topic: '', content: 'Note to self', timestamp: 1595479021 },
      { type: '', to: [9], topic: 'x', content: 'Unaddressed' },
      { type: 'private', to: [], topic: '', content: 'No recipients yet', timestamp: 1595479022 },
    ],
  });
  t.equal(created.status, 200);
  const ids = created.body.ids as number[];
  t.equal(ids.length, 5);
  t.equal(new Set(ids).size, 5, 'each draft gets its own id');

  const listed = await api.get('/drafts');
  t.equal(listed.body.count, 5);
  const byId = new Map((listed.body.drafts as DraftView[]).map((d) => [d.id, d]));
  t.same(byId.get(ids[0]!), { id: ids[0], type: 'stream', to: [design], topic: 'sync drafts', content: 'Channel draft', timestamp: 1595479019 },
    'trailing whitespace trimmed');
  t.same(byId.get(ids[1]!), { id: ids[1], type: 'private', to: [bob.userId, carol.userId].sort((a, b) => a - b), topic: '', content: 'Group draft', timestamp: 1595479020 },
    'direct recipients: the others, unique and sorted; topic ignored; timestamp whole seconds');
  t.match(byId.get(ids[2]!), { type: 'private', to: [me] }, 'a draft to oneself keeps the own id');
  const unaddressed = byId.get(ids[3]!)!;
  t.same([unaddressed.type, unaddressed.to, unaddressed.topic], ['', [], '']);
  t.ok(Math.abs(unaddressed.timestamp - Date.now() / 1000) < 60, 'timestamp filled in by the server');
  t.match(byId.get(ids[4]!), { type: '', to: [] }, 'a direct draft without recipients reads back unaddressed');
  t.same((listed.body.drafts as DraftView[]).slice(0, 3).map((d) => d.id), ids.slice(0, 3), 'oldest edit first');

  const edited = await api.patch(`/drafts/${ids[0]}`, { draft: { type: 'stream', to: [ops], topic: 'moved', content: 'Edited', timestamp: 1595479100 } });
  t.equal(edited.status, 200);
  t.match((await api.get('/drafts')).body.drafts.find((d: { id: number }) => d.id === ids[0]), { to: [ops], topic: 'moved', content: 'Edited', timestamp: 1595479100 });

  t.equal((await api.delete(`/drafts/${ids[1]}`)).status, 200);
  t.equal((await api.get('/drafts')).body.count, 4);

  const events = (await poll(api, queueId)) as { type: string; op: string; drafts?: { id: number }[]; draft?: unknown; draft_id?: number; id: number }[];
  t.equal(events.length, 3);
  t.match(events[0], { type: 'drafts', op: 'add' });
  t.same(events[0]!.drafts!.map((d) => d.id), ids);
  t.match(events[1], { type: 'drafts', op: 'update', draft: { id: ids[0], topic: 'moved', content: 'Edited' } });
  const ids3 = events.map((event) => event.id);
  t.same(events[2], { type: 'drafts', op: 'remove', draft_id: ids[1], id: ids3[2] });
  t.ok(ids3[0]! < ids3[1]! && ids3[1]! < ids3[2]!, 'event ids grow');
  t.same(await poll(api.as(bob), bobQueue), [], "another user's queue gets none of them");
  t.same((await api.as(bob).get('/drafts')).body.drafts, [], "another user sees none of them");

  const registered = (await api.register({ fetch_event_types: ['drafts'] })).body.drafts as { id: number }[];
  t.same(registered.map((d) => d.id), [ids[3], ids[0], ids[4], ids[2]], 'registration: newest edit first');
});

t.test('drafts: refused input changes nothing', async (t) => {
  const { api } = await startTestServer(t);
  const me = (await api.get('/users/me')).body.user_id as number;
  const gone = await api.createUser('gone@example.com', 'Gone');
  await api.delete(`/users/${gone.userId}`);
  const member = await api.createUser('member@example.com', 'Member');
  const general = await createChannel(api, 'general talk', [me]);
  const secret = await createChannel(api, 'secret', [me], true);
  const { queueId } = await api.register({ event_types: ['drafts'] });
  const base = { type: 'stream', to: [general], topic: 't', content: 'c' };

  const cases: [string, unknown, RegExp][] = [
    ['an id from the client', [{ ...base, id: 5 }], /id/],
    ['no channel id', [{ ...base, to: [] }], /exactly 1 channel ID/],
    ['two channel ids', [{ ...base, to: [general, secret] }], /exactly 1 channel ID/],
    ['an unknown channel', [{ ...base, to: [999] }], /Invalid channel ID/],
    ['a null byte in the topic', [{ ...base, topic: 'a\u0000b' }], /null bytes/],
    ['a null byte in the content', [{ ...base, content: 'a\u0000b' }], /null bytes/],
    ['empty content', [{ ...base, content: ' \n ' }], /must not be empty/],
    ['a negative timestamp', [{ ...base, timestamp: -1 }], /must not be negative/],
    ['an unknown type', [{ ...base, type: 'channel' }], /type/],
    ['a missing field', [{ type: 'stream', to: [1], content: 'c' }], /topic/],
    ['an unknown recipient', [{ ...base, type: 'private', to: [999] }], /Invalid user ID 999/],
    ['a deactivated recipient', [{ ...base, type: 'private', to: [gone.userId] }], /no longer using/],
    ['a later bad draft refuses the whole batch', [base, { ...base, to: [] }], /exactly 1 channel ID/],
  ];
  for (const [what, drafts, message] of cases) {
    const refused = await api.post('/drafts', { drafts });
    t.equal(refused.body.code, 'BAD_REQUEST', what);
    t.match(refused.body.msg, message, what);
  }
  t.equal((await api.get('/drafts')).body.count, 0, 'nothing was stored');
  const hidden = await api.as(member).post('/drafts', { drafts: [{ ...base, to: [secret] }] });
  t.equal(hidden.body.msg, 'Invalid channel ID', 'a private channel the user cannot see');
  t.equal((await api.post('/drafts', { drafts: [{ ...base, to: [secret] }] })).status, 200, 'its subscriber can');
  await api.delete(`/drafts/${(await api.get('/drafts')).body.drafts[0].id}`);

  const [id] = (await api.post('/drafts', { drafts: [base] })).body.ids as number[];
  const patched = await api.patch(`/drafts/${id}`, { draft: { ...base, id } });
  t.equal(patched.body.code, 'BAD_REQUEST', 'an id in an edited draft is refused');
  const badEdit = await api.patch(`/drafts/${id}`, { draft: { ...base, to: [general, secret] } });
  t.match(badEdit.body.msg, /exactly 1 channel ID/);
  t.equal((await api.patch(`/drafts/${id}`, {})).body.code, 'REQUEST_VARIABLE_MISSING', 'draft is required');
  for (const [method, result] of [
    ['PATCH', await api.patch('/drafts/999', { draft: base })],
    ['DELETE', await api.delete('/drafts/999')],
  ] as const) {
    t.equal(result.status, 404, `${method} of an unknown draft`);
    t.equal(result.body.code, 'BAD_REQUEST');
    t.equal(result.body.msg, 'Draft does not exist');
  }
  t.match((await api.get('/drafts')).body.drafts, [{ id, to: [general], topic: 't' }], 'the stored draft is unchanged');
  const events = await poll(api, queueId);
  t.same(events.map((e) => (e as { op?: string }).op), ['add', 'remove', 'add'], 'only the successful requests were announced');
});

t.test('drafts: turning synchronization off deletes them silently and refuses drafts until it is on again', async (t) => {
  const { api } = await startTestServer(t);
  const draft = { type: '', to: [], topic: '', content: 'Keep me' };
  await api.post('/drafts', { drafts: [draft, draft] });
  const { queueId } = await api.register({ event_types: ['drafts', 'user_settings'] });

  t.equal((await api.patch('/settings', { enable_drafts_synchronization: false })).status, 200);
  const events = (await poll(api, queueId)) as { type: string }[];
  t.same(events.map((e) => e.type), ['user_settings'], 'no drafts event for the deletion');
  t.same((await api.register({ fetch_event_types: ['drafts'] })).body.drafts, [], 'registration: empty while off');

  for (const [what, result] of [
    ['GET', await api.get('/drafts')],
    ['POST', await api.post('/drafts', { drafts: [draft] })],
    ['PATCH', await api.patch('/drafts/1', { draft })],
    ['DELETE', await api.delete('/drafts/1')],
  ] as const) {
    t.equal(result.body.code, 'BAD_REQUEST', what);
    t.equal(result.body.msg, 'User has disabled synchronizing drafts.', what);
  }

  await api.patch('/settings', { enable_drafts_synchronization: true });
  t.same((await api.get('/drafts')).body, { result: 'success', msg: '', count: 0, drafts: [] }, 'the old drafts are gone');
  const again = await api.post('/drafts', { drafts: [draft] });
  t.ok((again.body.ids[0] as number) > 2, 'ids are not reused');
});

t.test('drafts survive a restart', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await startTestServer(t, { dataDir });
  const me = (await first.api.get('/users/me')).body.user_id as number;
  const kept = await createChannel(first.api, 'kept', [me]);
  const { ids } = (await first.api.post('/drafts', { drafts: [{ type: 'stream', to: [kept], topic: 'kept', content: 'Across restarts', timestamp: 1700000000 }] })).body;
  await first.api.patch(`/drafts/${ids[0]}`, { draft: { type: 'stream', to: [kept], topic: 'kept', content: 'Edited before stop', timestamp: 1700000001 } });
  await first.stop();

  const second = await startTestServer(t, { dataDir });
  t.same((await second.api.get('/drafts')).body.drafts, [
    { id: ids[0], type: 'stream', to: [kept], topic: 'kept', content: 'Edited before stop', timestamp: 1700000001 },
  ]);
  const next = (await second.api.post('/drafts', { drafts: [{ type: '', to: [], topic: '', content: 'new' }] })).body.ids[0];
  t.ok(next > ids[0], 'the id counter survives too');
  await second.stop();
});
