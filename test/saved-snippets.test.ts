import t from 'tap';
import { startTestServer } from './helpers/server.ts';

t.test('saved snippets: create, list, edit, delete, with their events and errors', async (t) => {
  const { api } = await startTestServer(t);
  const { queueId } = await api.register({ event_types: ['saved_snippets'] });

  const created = await api.post('/saved_snippets', { title: 'Greeting', content: 'Welcome to **Chat**!' });
  t.equal(created.status, 200);
  const id = created.body.saved_snippet_id;
  t.type(id, 'number');

  const listed = await api.get('/saved_snippets');
  t.match(listed.body.saved_snippets, [{ id, title: 'Greeting', content: 'Welcome to **Chat**!', date_created: Number }]);

  t.equal((await api.patch(`/saved_snippets/${id}`, { content: 'Hello!' })).status, 200);
  t.match((await api.get('/saved_snippets')).body.saved_snippets, [{ id, title: 'Greeting', content: 'Hello!' }]);

  for (const [params, message] of [
    [{ title: '', content: 'x' }, /Title cannot be empty/],
    [{ title: 'x', content: '  ' }, /Content cannot be empty/],
  ] as const) {
    const refused = await api.post('/saved_snippets', params);
    t.equal(refused.body.code, 'BAD_REQUEST');
    t.match(refused.body.msg, message);
  }
  const missing = await api.post('/saved_snippets', { title: 'x' });
  t.equal(missing.body.code, 'REQUEST_VARIABLE_MISSING');
  const unknown = await api.patch('/saved_snippets/999', { title: 'x' });
  t.equal(unknown.body.code, 'BAD_REQUEST');
  t.match(unknown.body.msg, /does not exist/);

  t.equal((await api.delete(`/saved_snippets/${id}`)).status, 200);
  t.same((await api.get('/saved_snippets')).body.saved_snippets, []);
  t.equal((await api.delete(`/saved_snippets/${id}`)).body.code, 'BAD_REQUEST', 'deleting twice is refused');

  const events = await api.get('/events', { queue_id: queueId, last_event_id: -1, dont_block: true });
  t.match(events.body.events, [
    { type: 'saved_snippets', op: 'add', saved_snippet: { id, title: 'Greeting' } },
    { type: 'saved_snippets', op: 'update', saved_snippet: { id, content: 'Hello!' } },
    { type: 'saved_snippets', op: 'remove', saved_snippet_id: id },
  ]);
  t.equal(events.body.events.length, 3, 'refused commands announce nothing');

  // Another user sees neither the snippets nor their events.
  const other = await api.createUser('other@example.com');
  t.same((await api.as(other).get('/saved_snippets')).body.saved_snippets, []);
  const registered = await api.as(other).register({ fetch_event_types: ['saved_snippets'] });
  t.same(registered.body.saved_snippets, []);
  const mine = await api.register({ fetch_event_types: ['saved_snippets'] });
  t.same(mine.body.saved_snippets, [], 'registration state for the owner after the delete');
});
