import t from 'tap';
import { startTestServer } from './helpers/server.ts';

/**
 * Names people tell each other apart by (users, bots, channels, groups) refuse the invisible characters that
 * make one name pass for another, on every path that sets one; the characters scripts and emoji need stay.
 */
const LOOK_ALIKES: [string, string][] = [
  ['a right-to-left override', 'Ann\u202Egnp.exe'],
  ['a left-to-right isolate', 'Ann\u2066x'],
  ['a zero-width space', 'Ann\u200B'],
  ['a byte-order mark', 'An\uFEFFn'],
  ['a word joiner', 'An\u2060n'],
  ['a non-character', 'Ann\uFDD0'],
  ['a plane-end non-character', 'Ann\u{1FFFF}'],
  ['a control character', 'Ann\u0007'],
];
const FINE: [string, string][] = [
  ['a zero-width joiner in an emoji sequence', 'Family \u{1F468}\u200D\u{1F469}\u200D\u{1F467}'],
  ['a zero-width non-joiner (Persian)', 'می\u200Cخواهم'],
  ['a right-to-left mark', 'שלום\u200F'],
];

t.test('user, bot, channel and group names refuse look-alike characters and keep what scripts need', async (t) => {
  const { api } = await startTestServer(t);
  const member = await api.createUser('member@example.com', 'Member');
  const renamed = await api.post('/users/me/subscriptions', { subscriptions: JSON.stringify([{ name: 'renamed' }]) });
  t.equal(renamed.status, 200);
  const channelId = (await api.get('/get_stream_id', { stream: 'renamed' })).body.stream_id as number;
  let n = 0;
  const setters: [string, (name: string) => ReturnType<typeof api.post>][] = [
    ['POST /users', (name) => api.post('/users', { email: `u${++n}@example.com`, password: 'a-Strong-passw0rd-for-tests', full_name: name })],
    ['PATCH /settings', (name) => api.as(member).patch('/settings', { full_name: name })],
    ['PATCH /users/{id}', (name) => api.patch(`/users/${member.userId}`, { full_name: name })],
    ['POST /bots', (name) => api.post('/bots', { full_name: name, short_name: `bot${++n}` })],
    ['POST /users/me/subscriptions', (name) => api.post('/users/me/subscriptions', { subscriptions: JSON.stringify([{ name }]) })],
    ['PATCH /streams/{id}', (name) => api.patch(`/streams/${channelId}`, { new_name: name })],
    ['POST /user_groups/create', (name) => api.post('/user_groups/create', { name, description: 'd', members: JSON.stringify([member.userId]) })],
  ];
  for (const [path, set] of setters) {
    for (const [what, name] of LOOK_ALIKES) {
      const refused = await set(name);
      t.equal(refused.status, 400, `${path}: ${what} is refused`);
      t.match(refused.body, { result: 'error', msg: /Invalid character/ }, `${path}: ${what}`);
    }
    for (const [what, name] of FINE) {
      const taken = await set(`${name} ${++n}`);
      t.equal(taken.status, 200, `${path}: ${what} is taken (${JSON.stringify(taken.body)})`);
    }
  }
});
