import { Api, mapLimit, type Credentials } from './lib/api.ts';

export interface SeededUser extends Credentials {
  userId: number;
}

export interface RegisteredQueue {
  queueId: string;
  user: SeededUser;
  /** the newest event id acknowledged so far (the harness advances it as it polls) */
  lastEventId: number;
}

/**
 * Each creation hashes a password with scrypt (about 50 ms of one core) and each key fetch verifies one:
 * a few at a time keeps the server's thread pool busy without piling requests up.
 */
const SEED_CONCURRENCY = 4;
const QUEUE_CONCURRENCY = 8;

/** Creates `count` users through the API, as the owner, and fetches each one's API key by password. */
export async function seedUsers(api: Api, owner: Credentials, count: number): Promise<SeededUser[]> {
  const started = performance.now();
  const indexes = Array.from({ length: count }, (_, i) => i);
  const users = await mapLimit(indexes, SEED_CONCURRENCY, async (i) => {
    const email = `bench-user-${i}@example.com`;
    const password = `bench-Passw0rd-long-${i}`;
    const created = await api.ok('POST', '/users', { email, password, full_name: `Bench User ${i}` }, owner);
    const fetched = await api.ok('POST', '/fetch_api_key', { username: email, password }, null);
    return { email, key: String(fetched.api_key), userId: Number(created.user_id) };
  });
  console.log(`Seeded ${count} users in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return users;
}

/**
 * Registers `count` event queues (by default for realm_user events), spread round-robin over the users. No
 * initial state is fetched: these stand for idle clients, and the fan-out harness polls them.
 */
export async function registerQueues(
  api: Api,
  users: readonly SeededUser[],
  count: number,
  params: Record<string, unknown> = { event_types: ['realm_user'], fetch_event_types: [] },
): Promise<RegisteredQueue[]> {
  const indexes = Array.from({ length: count }, (_, i) => i);
  return mapLimit(indexes, QUEUE_CONCURRENCY, async (i) => {
    const user = users[i % users.length]!;
    const body = await api.ok('POST', '/register', params, user);
    return { queueId: String(body.queue_id), user, lastEventId: Number(body.last_event_id) };
  });
}

export async function deleteQueues(api: Api, queues: readonly RegisteredQueue[]): Promise<void> {
  await mapLimit(queues, QUEUE_CONCURRENCY, (queue) => api.ok('DELETE', '/events', { queue_id: queue.queueId }, queue.user));
}
