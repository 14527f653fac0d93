import t, { type Test } from 'tap';
import { Role } from '../actors/realm/roles.ts';
import { hashPassword } from '../src/passwords.ts';
import { HOST_CLIENT_PASSWORD as PASSWORD, HostClient, type Answer } from './helpers/host-client.ts';
import { startTestServer, type Params, type TestServer } from './helpers/server.ts';

/**
 * Who may see what. Realm isolation: nothing realm B holds (users, channels, messages, files, events) shows
 * through any endpoint of realm A, and neither realm's credentials work on the other's host. Private channels
 * and direct messages: invisible to non-participants on every read path. Guests: kept to their channels.
 *
 * Every secret is a distinctive word, and whole answers are searched for it, so that a leak through any
 * field of any endpoint is found, not only through the field a test thought of.
 */

const EXTERNAL = 'chat.test';
const B_WORD = 'acmeqzx';
const SECRET_WORD = 'zzsecretword';
const DM_WORD = 'zzdirectword';
const PUBLIC_WORD = 'zzpublicword';

interface World {
  server: TestServer;
  a: { owner: HostClient; alice: HostClient; bob: HostClient; carol: HostClient; guest: HostClient; ids: Record<string, number> };
  b: { owner: HostClient; bee: HostClient; ids: Record<string, number> };
  secretUpload: string;
  bUpload: string;
}

async function world(t: Test): Promise<World> {
  const server = await startTestServer(t, { externalUrl: `http://${EXTERNAL}`, rateLimit: null });
  const base = server.url;
  const owner = new HostClient(base, EXTERNAL, server.owner);

  // Realm A (the default one, on the bare host).
  const alice = await owner.createUser('alice@example.com', 'Alice');
  const bob = await owner.createUser('bob@example.com', 'Bob');
  const carol = await owner.createUser('carol@example.com', 'Carol');
  const guest = await owner.createUser('guest@example.com', 'Gus Guest');
  await owner.ok('PATCH', `/users/${guest.userId}`, { role: Role.guest });
  await alice.client.ok('POST', '/users/me/subscriptions', { subscriptions: [{ name: 'pub-chan' }], principals: [alice.userId, bob.userId] });
  await alice.client.ok('POST', '/users/me/subscriptions', { subscriptions: [{ name: 'secret-chan' }], principals: [alice.userId, bob.userId], invite_only: true });
  const pubId = (await alice.client.ok('GET', '/get_stream_id', { stream: 'pub-chan' })).body.stream_id;
  const secretId = (await alice.client.ok('GET', '/get_stream_id', { stream: 'secret-chan' })).body.stream_id;
  const uploaded = await alice.client.upload('zzsecretword-plan.txt', `${SECRET_WORD} file body`);
  if (uploaded.status !== 200) throw new Error(`upload failed: ${uploaded.text}`);
  const secretUpload: string = uploaded.body.url;

  // Realm B, on its subdomain, made as an operator would (create-realm), with its owner and a member.
  const runtime = server.server.runtime;
  const realmB = await runtime.createRealm(B_WORD, `${B_WORD} Corp`);
  await runtime.execute(realmB.realmId, {
    type: 'user.create', caller: { kind: 'operator' }, email: `boss@${B_WORD}.test`, fullName: `${B_WORD} Boss`,
    passwordHash: await hashPassword(PASSWORD), role: Role.owner, canCreateUsers: true,
  });
  const bOwner = await new HostClient(base, `${B_WORD}.${EXTERNAL}`, null).login(`boss@${B_WORD}.test`);
  const bee = await bOwner.createUser(`bee@${B_WORD}.test`, `${B_WORD} Bee`);
  await bOwner.ok('POST', '/users/me/subscriptions', { subscriptions: [{ name: `${B_WORD}-plans` }], principals: [bee.userId] });
  const bUploaded = await bOwner.upload(`${B_WORD}.txt`, `${B_WORD} file body`);
  if (bUploaded.status !== 200) throw new Error(`upload failed: ${bUploaded.text}`);
  const bMessage = await bOwner.ok('POST', '/messages', { type: 'stream', to: `${B_WORD}-plans`, topic: `${B_WORD} topic`, content: `${B_WORD} plan [file](${bUploaded.body.url})` });
  const bDm = await bOwner.ok('POST', '/messages', { type: 'direct', to: [bee.userId], content: `${B_WORD} direct` });

  return {
    server,
    a: {
      owner, alice: alice.client, bob: bob.client, carol: carol.client, guest: guest.client,
      ids: { alice: alice.userId, bob: bob.userId, carol: carol.userId, guest: guest.userId, pub: pubId, secret: secretId },
    },
    b: { owner: bOwner, bee: bee.client, ids: { message: bMessage.body.id, dm: bDm.body.id } },
    secretUpload,
    bUpload: bUploaded.body.url,
  };
}

/** Every read endpoint a client of a realm has, with ids up to `maxId` wherever an id goes. */
async function readEverything(client: HostClient, maxId: number): Promise<Answer[]> {
  const answers: Answer[] = [];
  const read = async (path: string, params?: Params) => answers.push(await client.get(path, params));
  for (const path of ['/users', '/users/me', '/streams', '/users/me/subscriptions', '/user_groups', '/realm/presence', '/drafts', '/attachments',
    '/server_settings', '/realm/profile_fields', '/bots', '/saved_snippets', '/scheduled_messages', '/users/me/alert_words']) await read(path);
  await read('/streams', { include_all: true, include_public: true, include_subscribed: true, include_all_active: true, include_default: true });
  await read('/messages', { anchor: 'newest', num_before: 1000, num_after: 0 });
  await read('/messages', { anchor: 0, num_before: 0, num_after: 1000, narrow: [{ operator: 'search', operand: B_WORD }] });
  await read('/messages', { message_ids: Array.from({ length: maxId }, (_, i) => i + 1) });
  await read('/messages/matches_narrow', { msg_ids: Array.from({ length: maxId }, (_, i) => i + 1), narrow: [] });
  await read('/get_stream_id', { stream: `${B_WORD}-plans` });
  for (let id = 1; id <= maxId; id++) {
    for (const path of [`/users/${id}`, `/users/${id}/presence`, `/users/${id}/status`, `/streams/${id}`, `/streams/${id}/members`, `/users/me/${id}/topics`,
      `/messages/${id}`, `/messages/${id}/history`, `/user_groups/${id}/members`, `/users/${id}/subscriptions/1`]) await read(path);
  }
  answers.push(await client.post('/register', {}));
  return answers;
}

/** The answers that show a secret word the request did not itself name (an error may repeat the request). */
function leaks(answers: Answer[], word: RegExp): string[] {
  const global = new RegExp(word.source, 'gi');
  return answers
    .filter((answer) => [...answer.text.matchAll(global)].some((match) => !answer.sent.toLowerCase().includes(match[0].toLowerCase())))
    .map((answer) => answer.text.slice(0, 300));
}

t.test('realm isolation: nothing of realm B shows in realm A, and credentials do not cross', async (t) => {
  const w = await world(t);
  const { owner, alice, carol } = w.a;
  const queue = await owner.ok('POST', '/register', {});
  const aliceQueue = await alice.ok('POST', '/register', { all_public_streams: true });

  // Activity in B after A's queues exist: none of it may reach them.
  await w.b.owner.ok('POST', '/messages', { type: 'stream', to: `${B_WORD}-plans`, topic: 'later', content: `${B_WORD} later` });
  await w.b.owner.ok('POST', '/users', { email: `late@${B_WORD}.test`, password: PASSWORD, full_name: `${B_WORD} Late` });
  await w.b.owner.ok('POST', '/users/me/subscriptions', { subscriptions: [{ name: `${B_WORD}-new` }] });
  await w.b.owner.ok('PATCH', '/settings', { full_name: `${B_WORD} Renamed` });

  for (const [who, client] of [['owner', owner], ['member', carol]] as const) {
    const answers = await readEverything(client, 12);
    t.same(leaks(answers, new RegExp(B_WORD, 'i')), [], `no endpoint of realm A shows realm B's data to A's ${who} (${answers.length} answers read)`);
    t.ok(answers.filter((answer) => answer.status >= 500).length === 0, 'and none of them fails');
  }
  const events = await owner.ok('GET', '/events', { queue_id: queue.body.queue_id, last_event_id: -1, dont_block: true });
  const aliceEvents = await alice.ok('GET', '/events', { queue_id: aliceQueue.body.queue_id, last_event_id: -1, dont_block: true });
  t.notMatch(events.text, new RegExp(B_WORD, 'i'), "realm A's owner's queue gets no event of realm B");
  t.notMatch(aliceEvents.text, new RegExp(B_WORD, 'i'), 'nor an all_public_streams queue');

  // A file of realm B: not from A's host, not with A's credentials on B's host.
  const bFile = await owner.get(w.bUpload);
  t.equal(bFile.status, 404, "realm B's file is not found on realm A's host");
  t.notMatch(bFile.text, new RegExp(B_WORD));
  const crossFile = await w.b.owner.as(owner.credentials).get(w.bUpload);
  t.equal(crossFile.status, 401, "A's credentials are refused on B's host");
  const bOwnFile = await w.b.bee.get(w.bUpload);
  t.equal(bOwnFile.status, 200, "the file is served to realm B's subscriber (the check above is not vacuous)");

  // Credentials belong to their realm.
  const bOnA = await owner.as(w.b.owner.credentials).get('/users/me');
  t.equal(bOnA.status, 401, "B's owner's key does not work on A's host");
  t.equal(bOnA.body.code, 'UNAUTHORIZED');
  const aOnB = await w.b.owner.as(owner.credentials).get('/users/me');
  t.equal(aOnB.status, 401, "A's owner's key does not work on B's host");
  const loginAcross = await owner.as(null).post('/fetch_api_key', { username: `boss@${B_WORD}.test`, password: PASSWORD });
  t.not(loginAcross.status, 200, "B's owner cannot log in on A's host");
  t.notMatch(loginAcross.text, /api_key"\s*:\s*"\w/);
  const sameEmail = await w.b.owner.createUser('alice@example.com', 'B Alice');
  t.not(sameEmail.client.credentials!.key, alice.credentials!.key, 'the same email in two realms is two accounts with two keys');
  t.equal((await alice.as(sameEmail.client.credentials).get('/users/me')).status, 401, "B's alice's key does not open A's alice");

  // Writes cannot reach into B either: ids that exist in B name nothing, or A's own objects.
  const dmToB = await carol.post('/messages', { type: 'direct', to: [`bee@${B_WORD}.test`], content: 'hello' });
  t.not(dmToB.status, 200, 'a direct message to a user of realm B is refused');
  const toBChannel = await carol.post('/messages', { type: 'stream', to: `${B_WORD}-plans`, topic: 't', content: 'hello' });
  t.not(toBChannel.status, 200, "sending to realm B's channel by name is refused");
  const unknownHost = await owner.as(null).get('/server_settings').then(() => new HostClient(w.server.url, `nosuch.${EXTERNAL}`, owner.credentials).get('/users/me'));
  t.equal(unknownHost.status, 404, 'an unknown subdomain is no realm at all');
});

t.test('private channels and direct messages: invisible to non-participants on every read path', async (t) => {
  const w = await world(t);
  const { owner, alice, bob, carol, guest, ids } = w.a;
  // Queues registered before anything is said: they must get nothing they may not see.
  const queues = await Promise.all([
    carol.ok('POST', '/register', {}), guest.ok('POST', '/register', {}), owner.ok('POST', '/register', {}),
    carol.ok('POST', '/register', { all_public_streams: true }), owner.ok('POST', '/register', { all_public_streams: true }),
  ]);
  const bobQueue = await bob.ok('POST', '/register', {});
  const secretMessage = (await alice.ok('POST', '/messages', { type: 'stream', to: String(ids.secret), topic: `${SECRET_WORD} topic`, content: `${SECRET_WORD} [plan](${w.secretUpload})` })).body.id;
  const dm = (await alice.ok('POST', '/messages', { type: 'direct', to: [ids.bob], content: `${DM_WORD} for bob` })).body.id;
  await alice.ok('POST', `/messages/${secretMessage}/reactions`, { emoji_name: 'smile' });
  await alice.ok('PATCH', `/messages/${secretMessage}`, { content: `${SECRET_WORD} edited [plan](${w.secretUpload})` });
  await alice.ok('POST', '/messages', { type: 'stream', to: 'pub-chan', topic: 'open', content: `${PUBLIC_WORD} for all` });
  const hidden = new RegExp(`${SECRET_WORD}|${DM_WORD}|secret-chan`, 'i');

  // Sanity: the participants do see them, so the searches below are not vacuous.
  t.match((await bob.ok('GET', `/messages/${secretMessage}`)).text, SECRET_WORD);
  t.match((await bob.ok('GET', `/messages/${dm}`)).text, DM_WORD);
  const bobEvents = await bob.ok('GET', '/events', { queue_id: bobQueue.body.queue_id, last_event_id: -1, dont_block: true });
  t.match(bobEvents.text, SECRET_WORD, "a participant's queue has the message");
  t.equal((await bob.get(w.secretUpload)).status, 200, 'a participant may fetch the file');

  for (const [who, client] of [['a member outside them', carol], ['a guest', guest], ['the owner, not subscribed', owner]] as const) {
    const answers: Answer[] = [];
    const read = async (method: string, path: string, params?: Params) => answers.push(await client.send(method, path, params));
    await read('GET', '/messages', { anchor: 'newest', num_before: 1000, num_after: 0 });
    await read('GET', '/messages', { anchor: 'newest', num_before: 1000, num_after: 0, narrow: [{ operator: 'channel', operand: ids.secret }] });
    await read('GET', '/messages', { anchor: 'newest', num_before: 1000, num_after: 0, narrow: [{ operator: 'channel', operand: 'secret-chan' }] });
    await read('GET', '/messages', { anchor: 'newest', num_before: 1000, num_after: 0, narrow: [{ operator: 'dm', operand: [ids.alice, ids.bob] }] });
    await read('GET', '/messages', { anchor: 'newest', num_before: 1000, num_after: 0, narrow: [{ operator: 'is', operand: 'dm' }] });
    await read('GET', '/messages', { anchor: 'newest', num_before: 1000, num_after: 0, narrow: [{ operator: 'sender', operand: ids.alice }] });
    await read('GET', '/messages', { anchor: 'newest', num_before: 1000, num_after: 0, narrow: [{ operator: 'search', operand: SECRET_WORD }] });
    await read('GET', '/messages', { anchor: 'newest', num_before: 1000, num_after: 0, narrow: [{ operator: 'search', operand: DM_WORD }] });
    await read('GET', '/messages', { anchor: 'newest', num_before: 1000, num_after: 0, narrow: [{ operator: 'topic', operand: `${SECRET_WORD} topic` }] });
    await read('GET', '/messages', { anchor: 'newest', num_before: 1000, num_after: 0, narrow: [{ operator: 'id', operand: secretMessage }] });
    await read('GET', '/messages', { message_ids: [secretMessage, dm] });
    await read('GET', `/messages/${secretMessage}`);
    await read('GET', `/messages/${dm}`);
    await read('GET', `/messages/${secretMessage}/history`);
    await read('GET', `/messages/${dm}/history`);
    await read('GET', '/messages/matches_narrow', { msg_ids: [secretMessage, dm], narrow: [] });
    await read('GET', '/messages/matches_narrow', { msg_ids: [secretMessage, dm], narrow: [{ operator: 'search', operand: SECRET_WORD }] });
    await read('GET', `/streams/${ids.secret}`);
    await read('GET', `/users/me/${ids.secret}/topics`);
    await read('GET', '/get_stream_id', { stream: 'secret-chan' });
    await read('GET', '/users/me/subscriptions');
    await read('GET', '/attachments');
    await read('POST', '/register', {});
    // Administrators may see a private channel's name and members (not its messages).
    const leaked = leaks(answers, client === owner ? new RegExp(`${SECRET_WORD}|${DM_WORD}`, 'i') : hidden);
    t.same(leaked, [], `${who}: no read path shows the private channel's messages or the direct message`);
    const fetched = answers.filter((answer) => answer.status >= 500);
    t.same(fetched.map((answer) => answer.text), [], `${who}: and none fails`);

    const file = await client.get(w.secretUpload);
    t.equal(file.status, 404, `${who}: the file linked only in the private channel is not found`);
    t.notMatch(file.text, SECRET_WORD);
    // Writes that would touch the message are refused without telling what it holds.
    for (const answer of [
      await client.post(`/messages/${secretMessage}/reactions`, { emoji_name: 'smile' }),
      await client.patch(`/messages/${secretMessage}`, { topic: 'moved' }),
      await client.delete(`/messages/${secretMessage}`),
      await client.post(`/messages/${dm}/reactions`, { emoji_name: 'smile' }),
    ]) {
      t.not(answer.status, 200, `${who}: a write to a message it cannot see is refused`);
      t.notMatch(answer.text, hidden);
    }
    // Flagging ids it cannot see gives no access to them either.
    await client.post('/messages/flags', { messages: [secretMessage, dm], op: 'add', flag: 'starred' });
    const starred = await client.get('/messages', { anchor: 'newest', num_before: 100, num_after: 0, narrow: [{ operator: 'is', operand: 'starred' }] });
    t.notMatch(starred.text, new RegExp(`${SECRET_WORD}|${DM_WORD}`), `${who}: starring a message it cannot see does not show it`);
  }
  // Channel metadata: who is in a private channel is for its subscribers and administrators.
  for (const [who, client] of [['a member outside it', carol], ['a guest', guest]] as const) {
    const streams = await client.ok('GET', '/streams');
    t.notMatch(streams.text, /secret-chan/, `${who}: GET /streams does not list the private channel`);
    t.not((await client.get(`/streams/${ids.secret}/members`)).status, 200, `${who}: its members are not listed`);
    const membership = await client.get(`/users/${ids.alice}/subscriptions/${ids.secret}`);
    t.not(membership.status, 200, `${who}: whether a user is subscribed to it is not told`);
  }
  const adminView = await owner.ok('GET', `/streams/${ids.secret}/members`);
  t.same(adminView.body.subscribers.sort(), [ids.alice, ids.bob].sort(), 'an administrator may see who is in it');

  const labels = ['member', 'guest', 'owner', 'member, all public', 'owner, all public'];
  for (const [index, queue] of queues.entries()) {
    const client = [carol, guest, owner, carol, owner][index]!;
    const events = await client.ok('GET', '/events', { queue_id: queue.body.queue_id, last_event_id: -1, dont_block: true });
    t.notMatch(events.text, new RegExp(`${SECRET_WORD}|${DM_WORD}`), `the ${labels[index]} queue gets no event of the private channel or the direct message`);
  }
});

t.test('guests: only their own channels', async (t) => {
  const w = await world(t);
  const { alice, guest, ids } = w.a;
  const publicMessage = (await alice.ok('POST', '/messages', { type: 'stream', to: 'pub-chan', topic: 'open', content: `${PUBLIC_WORD} for members` })).body.id;
  const publicWord = new RegExp(`${PUBLIC_WORD}|pub-chan`);

  const streams = await guest.ok('GET', '/streams');
  t.notMatch(streams.text, publicWord, 'a public channel the guest is not in is not listed');
  t.not((await guest.get(`/streams/${ids.pub}`)).status, 200, 'nor shown by id');
  t.not((await guest.get(`/streams/${ids.pub}/members`)).status, 200, 'nor its members');
  for (const narrow of [[{ operator: 'channel', operand: ids.pub }], [{ operator: 'search', operand: PUBLIC_WORD }], [{ operator: 'channels', operand: 'public' }], []]) {
    const read = await guest.get('/messages', { anchor: 'newest', num_before: 100, num_after: 0, narrow });
    t.notMatch(read.text, new RegExp(PUBLIC_WORD), `GET /messages ${JSON.stringify(narrow)} shows the guest no public message`);
  }
  t.not((await guest.get(`/messages/${publicMessage}`)).status, 200, 'nor by id');
  t.notMatch((await guest.get('/messages/matches_narrow', { msg_ids: [publicMessage], narrow: [] })).text, new RegExp(String(PUBLIC_WORD)));

  const join = await guest.post('/users/me/subscriptions', { subscriptions: [{ name: 'pub-chan' }] });
  t.not(join.status, 200, 'a guest cannot join a public channel');
  t.notMatch((await guest.ok('GET', '/users/me/subscriptions')).text, /pub-chan/, 'and is not subscribed after trying');
  const create = await guest.post('/users/me/subscriptions', { subscriptions: [{ name: 'guest-made' }] });
  t.not(create.status, 200, 'a guest cannot create a channel');
  const send = await guest.post('/messages', { type: 'stream', to: 'pub-chan', topic: 't', content: 'hi' });
  t.not(send.status, 200, 'nor send to a public channel it is not in');
  const allPublic = await guest.post('/register', { all_public_streams: true });
  t.not(allPublic.status, 200, 'nor register for all public channels');
  const invite = await guest.post('/users', { email: 'friend@example.com', password: PASSWORD, full_name: 'Friend' });
  t.not(invite.status, 200, 'nor create users');

  // Once subscribed (by a member), the guest reads the channel.
  await alice.ok('POST', '/users/me/subscriptions', { subscriptions: [{ name: 'pub-chan' }], principals: [ids.guest] });
  t.match((await guest.ok('GET', `/messages/${publicMessage}`)).text, PUBLIC_WORD, 'a subscribed guest reads the channel');
});
