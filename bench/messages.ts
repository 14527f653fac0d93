import autocannon from 'autocannon';
import type { HttpScenario } from './http.ts';
import { Api, basicAuth, formEncode, type Credentials } from './lib/api.ts';
import { settledMemory, type Child, type MemoryProbe } from './lib/proc.ts';
import { round } from './lib/stats.ts';
import type { SeededUser } from './seed.ts';

/** What the bench's messages say: a line of prose with a little Markdown, about the size of a chat line. */
export const MESSAGE_TEXT = 'Bench message: the quick brown fox jumps over the **lazy** dog, then naps.';

/** The topic the message-memory phase fills; `GET /messages` narrows to it, `GET /messages/{id}` reads from it. */
export const HISTORY_TOPIC = 'bench history';

/** Users named per `POST /users/me/subscriptions` request: a realistic client batch, well under any body limit. */
const PRINCIPALS_PER_REQUEST = 100;

/** Connections of the autocannon run that stores the memory phase's messages. */
const SEND_CONNECTIONS = 16;

export interface BenchChannel {
  id: number;
  name: string;
  subscribers: number;
}

/**
 * A public channel made by the owner, with the owner and the first `subscribers - 1` seeded users as its
 * subscribers, added through `principals` in batches; the subscriber count is read back from the server.
 */
export async function seedChannel(api: Api, owner: Credentials, users: readonly SeededUser[], name: string, subscribers: number): Promise<BenchChannel> {
  await api.ok('POST', '/users/me/subscriptions', { subscriptions: [{ name }] }, owner);
  const others = users.slice(0, Math.max(0, subscribers - 1)).map((user) => user.userId);
  for (let start = 0; start < others.length; start += PRINCIPALS_PER_REQUEST) {
    await api.ok('POST', '/users/me/subscriptions', { subscriptions: [{ name }], principals: others.slice(start, start + PRINCIPALS_PER_REQUEST) }, owner);
  }
  const id = Number((await api.ok('GET', '/get_stream_id', { stream: name }, owner)).stream_id);
  const members = (await api.ok('GET', `/streams/${id}/members`, {}, owner)).subscribers as number[];
  if (members.length !== others.length + 1) throw new Error(`channel ${name} has ${members.length} subscribers, expected ${others.length + 1}`);
  return { id, name, subscribers: members.length };
}

function sendBody(channel: BenchChannel, topic: string): string {
  return formEncode({ type: 'channel', to: String(channel.id), topic, content: MESSAGE_TEXT });
}

/** Sends exactly `count` messages as the owner with autocannon (`amount`); resolves with the failures. */
function sendMessages(url: string, owner: Credentials, channel: BenchChannel, topic: string, count: number): Promise<number> {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: `${url}/api/v1/messages`,
        method: 'POST',
        headers: { authorization: basicAuth(owner), 'content-type': 'application/x-www-form-urlencoded' },
        body: sendBody(channel, topic),
        connections: SEND_CONNECTIONS,
        amount: count,
        timeout: 30,
      },
      (error, result) => (error ? reject(error) : resolve(result.non2xx + result.errors)),
    );
  });
}

export interface MessageMemory {
  messages: number;
  subscribers: number;
  /** characters of each message's Markdown (its rendered HTML is stored as well) */
  contentLength: number;
  /** anonymous RSS growth per stored message, each figure after a full collection */
  bytesPerMessage: number;
  heapBytesPerMessage: number;
  seconds: number;
  errors: number;
  before: MemoryProbe;
  after: MemoryProbe;
}

/**
 * Memory per stored message: the server's memory (after the forced-GC probe) before and after storing
 * `count` messages in `channel`'s history topic. No event queue takes message events meanwhile, so the
 * growth is the message store: the message, its indexes, and its recipients' flags.
 */
export async function measureMessageMemory(server: Child, owner: Credentials, channel: BenchChannel, count: number): Promise<MessageMemory> {
  const before = await settledMemory(server);
  const started = performance.now();
  const errors = await sendMessages(server.url, owner, channel, HISTORY_TOPIC, count);
  const seconds = (performance.now() - started) / 1000;
  const after = await settledMemory(server);
  const stored = count - errors;
  const memory: MessageMemory = {
    messages: stored,
    subscribers: channel.subscribers,
    contentLength: MESSAGE_TEXT.length,
    bytesPerMessage: (after.rssAnon - before.rssAnon) / stored,
    heapBytesPerMessage: (after.heapUsed - before.heapUsed) / stored,
    seconds,
    errors,
    before,
    after,
  };
  console.log(
    `Stored ${stored} messages (${channel.subscribers} subscribers) in ${seconds.toFixed(1)} s, errors ${errors}: ` +
      `${round(memory.heapBytesPerMessage)} B heap, ${round(memory.bytesPerMessage)} B anonymous RSS per message`,
  );
  return memory;
}

export interface MessageScenarioContext {
  owner: Credentials;
  users: readonly SeededUser[];
  small: BenchChannel;
  large: BenchChannel;
  /** a message of the small channel's history topic */
  messageId: number;
}

/** Each new connection takes the next user: a user's requests then come one at a time, in order. */
function userRotation(users: readonly SeededUser[]): () => SeededUser {
  let next = 0;
  return () => users[next++ % users.length]!;
}

/** The reads: one message by id, and the newest 50 of a channel's topic. */
export function messageReadScenarios(context: MessageScenarioContext): HttpScenario[] {
  const auth = { authorization: basicAuth(context.owner) };
  const narrow = JSON.stringify([
    { operator: 'channel', operand: context.small.id },
    { operator: 'topic', operand: HISTORY_TOPIC },
  ]);
  const query = new URLSearchParams({ anchor: 'newest', num_before: '50', num_after: '0', narrow });
  return [
    { name: 'GET /messages/{id}', method: 'GET', path: `/api/v1/messages/${context.messageId}`, headers: auth },
    { name: 'GET /messages channel+topic, 50 newest', method: 'GET', path: `/api/v1/messages?${query}`, headers: auth },
  ];
}

/**
 * The writes: sends to the two channels (as the owner), drafts and settings (each connection as a user of
 * its own). PATCH /settings flips `enter_sends` from the value that user last sent, so that every request
 * changes something (the server commits nothing for a no-op); each connection takes a user not used
 * before while there are enough.
 */
export function messageWriteScenarios(context: MessageScenarioContext): HttpScenario[] {
  const auth = { authorization: basicAuth(context.owner) };
  const draftBody = formEncode({
    drafts: [{ type: 'stream', to: [context.small.id], topic: 'bench draft', content: 'A draft the bench saves, never to be sent.' }],
  });
  const draftUser = userRotation(context.users);
  const settingsUser = userRotation(context.users);
  const enterSends = new Map<number, boolean>();
  const send = (channel: BenchChannel, connections?: number): HttpScenario => ({
    name: `POST /messages (${channel.subscribers} subscribers${connections === 1 ? ', 1 connection' : ''})`,
    method: 'POST',
    path: '/api/v1/messages',
    headers: auth,
    body: sendBody(channel, 'bench send'),
    connections,
  });
  return [
    // One client sending one message at a time: the send latency at a moderate load (the target's p50).
    send(context.small, 1),
    send(context.small),
    send(context.large),
    {
      name: 'POST /drafts',
      method: 'POST',
      path: '/api/v1/drafts',
      perConnection: () => ({ headers: { authorization: basicAuth(draftUser()) }, body: () => draftBody }),
    },
    {
      name: 'PATCH /settings (enter_sends)',
      method: 'PATCH',
      path: '/api/v1/settings',
      perConnection: () => {
        const user = settingsUser();
        return {
          headers: { authorization: basicAuth(user) },
          body: () => {
            const value = !(enterSends.get(user.userId) ?? false);
            enterSends.set(user.userId, value);
            return `enter_sends=${value}`;
          },
        };
      },
    },
  ];
}
