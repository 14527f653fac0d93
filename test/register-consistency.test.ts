import t from 'tap';
import { drain } from './helpers/messages.ts';
import { startTestServer } from './helpers/server.ts';

t.test('registrations racing with writes: every change is in the initial state or in the events, once', async (t) => {
  const { api } = await startTestServer(t);
  const created: Promise<unknown>[] = [];
  const registered: Promise<{ queueId: string; emails: string[] }>[] = [];
  for (let i = 0; i < 40; i++) {
    created.push(api.createUser(`racer${i}@example.com`, `Racer ${i}`));
    if (i % 3 === 0) {
      registered.push(
        api.post('/register', { event_types: JSON.stringify(['realm_user']), fetch_event_types: JSON.stringify(['realm_user']) }).then((response) => ({
          queueId: response.body.queue_id as string,
          emails: (response.body.realm_users as { email: string }[]).map((user) => user.email),
        })),
      );
    }
  }
  await Promise.all(created);
  const registrations = await Promise.all(registered);
  const everyone = ((await api.get('/users')).body.members as { email: string }[]).map((user) => user.email).sort();
  t.equal(everyone.length, 41);
  t.ok(registrations.some((registration) => registration.emails.length < everyone.length), 'some registrations came before some writes');
  for (const [n, { queueId, emails }] of registrations.entries()) {
    const events = await drain(api, queueId);
    const added = events.filter((event) => event.type === 'realm_user' && event.op === 'add').map((event) => (event.person as { email: string }).email);
    const both = added.filter((email) => emails.includes(email));
    t.same(both, [], `registration ${n}: no user both in the state and in an event`);
    t.same([...emails, ...added].sort(), everyone, `registration ${n}: state and events together hold every user`);
  }
});
