import type { TestServer, ApiClient, Params } from './server.ts';

/** Helpers shared by the message tests: channels, sending, fetching and reading events. */

export async function channel(api: ApiClient, name: string, principals: number[], extra: Params = {}): Promise<number> {
  const result = await api.post('/users/me/subscriptions', { subscriptions: [{ name }], principals, ...extra });
  if (result.status !== 200) throw new Error(`subscribe failed: ${JSON.stringify(result.body)}`);
  return (await api.get('/get_stream_id', { stream: name })).body.stream_id;
}

export async function sendToChannel(api: ApiClient, to: string | number, topic: string, content: string, extra: Params = {}): Promise<number> {
  const result = await api.post('/messages', { type: 'stream', to: typeof to === 'number' ? String(to) : to, topic, content, ...extra });
  if (result.status !== 200) throw new Error(`send failed: ${JSON.stringify(result.body)}`);
  return result.body.id;
}

export async function sendDirect(api: ApiClient, to: (number | string)[], content: string, extra: Params = {}): Promise<number> {
  const result = await api.post('/messages', { type: 'direct', to, content, ...extra });
  if (result.status !== 200) throw new Error(`send failed: ${JSON.stringify(result.body)}`);
  return result.body.id;
}

/** Message ids of GET /messages for a narrow, oldest first. */
export async function fetchIds(api: ApiClient, narrow: unknown[] = [], extra: Params = {}): Promise<number[]> {
  const result = await api.get('/messages', { anchor: 'newest', num_before: 1000, num_after: 0, narrow, ...extra });
  if (result.status !== 200) throw new Error(`fetch failed: ${JSON.stringify(result.body)}`);
  return result.body.messages.map((message: { id: number }) => message.id);
}

export type Event = Record<string, unknown> & { type: string };

const acknowledged = new Map<string, number>();

/** The events queued since the last drain of this queue, without blocking (and acknowledging them next time). */
export async function drain(api: ApiClient, queueId: string): Promise<Event[]> {
  const result = await api.get('/events', { queue_id: queueId, last_event_id: acknowledged.get(queueId) ?? -1, dont_block: true });
  if (result.status !== 200) throw new Error(`events failed: ${JSON.stringify(result.body)}`);
  const events: (Event & { id: number })[] = result.body.events;
  if (events.length) acknowledged.set(queueId, events[events.length - 1]!.id);
  return events;
}

export const ofType = (events: Event[], type: string) => events.filter((event) => event.type === type);

/** Moves the server's clock forward (the runtime reads time only through its injected clock). */
export function advanceClock(server: TestServer, seconds: number): void {
  const clock = server.server.runtime.clock;
  const previous = clock.now;
  clock.now = () => previous() + seconds * 1000;
}
