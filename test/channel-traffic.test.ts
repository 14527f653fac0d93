import t from 'tap';
import { startTestServer, type ApiClient, type TestServer } from './helpers/server.ts';
import { sendToChannel } from './helpers/messages.ts';

const DAY = 24 * 3600;
const WEEK = 7 * DAY;

/**
 * `is_recently_active` and `stream_weekly_traffic` count each channel's recent messages; the counts are kept
 * until the channel's list changes or the window passes the oldest message counted (channels/activity.ts).
 * Over six weeks of clock, 30 channels (more than the key cache of 16 keeps) are compared at every step with
 * the figures made from the messages' own times: through quiet weeks, a deletion and a move each before and
 * after a snapshot, the window's edges to the second, and a restart.
 */
t.test('channel traffic in the lists follows the messages and the clock exactly, through changes, snapshots and a restart', async (t) => {
  const first = await startTestServer(t, { rateLimit: null, messageKeyCache: 16 });
  const names = Array.from({ length: 30 }, (_, i) => `channel ${i}`);
  t.equal((await first.api.post('/users/me/subscriptions', { subscriptions: names.map((name) => ({ name })), send_new_subscription_messages: false })).status, 200);
  const streams = (await first.api.get('/streams')).body.streams as { name: string; stream_id: number; date_created: number }[];
  const created = new Map(streams.filter((s) => names.includes(s.name)).map((s) => [s.stream_id, s.date_created]));
  const idOf = new Map(streams.map((s) => [s.name, s.stream_id]));

  let now = first.server.runtime.clock.now();
  const useClock = (server: TestServer['server']) => {
    const clock = server.runtime.clock as { now: () => number };
    const realNow = clock.now;
    clock.now = () => now;
    t.teardown(() => void (clock.now = realNow));
  };
  useClock(first.server);
  /** message id -> its channel and time (UNIX seconds) */
  const sent = new Map<number, { channel: number; at: number }>();
  const send = async (api: ApiClient, channel: number, topic = 'talk') => {
    const id = await sendToChannel(api, channel, topic, 'hello');
    sent.set(id, { channel, at: Math.floor(now / 1000) });
    return id;
  };

  const expected = (channel: number) => {
    const seconds = Math.floor(now / 1000);
    const age = seconds - created.get(channel)!;
    const window = Math.min(age, 4 * WEEK);
    const times = [...sent.values()].filter((message) => message.channel === channel).map((message) => message.at);
    return {
      is_recently_active: age < WEEK || times.some((at) => at >= seconds - WEEK),
      stream_weekly_traffic: age < WEEK ? null : Math.round((times.filter((at) => at >= seconds - window).length * WEEK) / window),
    };
  };
  const check = async (api: ApiClient, step: string) => {
    const subscriptions = (await api.get('/users/me/subscriptions')).body.subscriptions as { stream_id: number; is_recently_active: boolean; stream_weekly_traffic: number | null }[];
    const got = Object.fromEntries(subscriptions.map((s) => [s.stream_id, { is_recently_active: s.is_recently_active, stream_weekly_traffic: s.stream_weekly_traffic }]));
    const want = Object.fromEntries([...created.keys()].map((channel) => [channel, expected(channel)]));
    t.same(got, want, `${step}: every channel's traffic`);
  };

  // Six weeks, a few hours into each day: channel c sends on some days, the even ones fall quiet for eleven.
  // A snapshot every few days: a list changed since the last one is counted again at each ask, not kept.
  for (let day = 0; day < 42; day++) {
    if (day % 4 === 3) await first.server.runtime.snapshot();
    now += DAY * 1000 + ((day * 37) % 11) * 3600 * 1000;
    for (const [c, name] of names.entries()) {
      const quiet = day >= 15 && day < 26 && c % 2 === 0;
      if (!quiet && (day * 7 + c) % 11 < 3) await send(first.api, idOf.get(name)!);
    }
    await check(first.api, `day ${day}`);
  }

  // A deletion in the window, seen while the list is changed and after a snapshot took the change.
  const recent = [...sent.entries()].filter(([, message]) => message.at >= Math.floor(now / 1000) - 3 * DAY);
  await check(first.api, 'before a deletion');
  t.equal((await first.api.delete(`/messages/${recent[0]![0]}`)).status, 200);
  sent.delete(recent[0]![0]);
  await first.server.runtime.snapshot();
  await check(first.api, 'after a deletion and a snapshot');
  t.equal((await first.api.delete(`/messages/${recent[1]![0]}`)).status, 200);
  sent.delete(recent[1]![0]);
  await check(first.api, 'after a deletion');
  await first.server.runtime.snapshot();
  await check(first.api, 'after a deletion, then a snapshot');

  // A topic of older messages moves into another channel's window.
  const from = recent[2]![1].channel;
  const to = [...created.keys()].find((channel) => channel !== from)!;
  const moving = await send(first.api, from, 'moving');
  const older = [...sent.entries()].filter(([id, message]) => message.channel === from && id !== moving);
  t.equal((await first.api.patch(`/messages/${older[older.length - 1]![0]}`, { topic: 'moving' })).status, 200);
  const moved = await first.api.patch(`/messages/${moving}`, {
    stream_id: to,
    propagate_mode: 'change_all',
    send_notification_to_old_thread: false,
    send_notification_to_new_thread: false,
  });
  t.equal(moved.status, 200);
  for (const [id, message] of sent) if (message.channel === from && (id === moving || id === older[older.length - 1]![0])) message.channel = to;
  await first.server.runtime.snapshot();
  await check(first.api, 'after a move and a snapshot');
  // The window's edge to the second: a message counts while it is exactly a week or four weeks old.
  const edge = sent.get(await send(first.api, to))!;
  for (const span of [WEEK, 4 * WEEK]) {
    for (const offset of [-1, 0, 1]) {
      now = (edge.at + span + offset) * 1000;
      await check(first.api, `${span / DAY} days ${offset >= 0 ? '+' : ''}${offset} s after a message`);
    }
  }
  await first.stop();

  const second = await startTestServer(t, { dataDir: first.dataDir, rateLimit: null, messageKeyCache: 16 });
  useClock(second.server);
  await check(second.api, 'after a restart');
  await send(second.api, from);
  now += 3 * WEEK * 1000;
  await check(second.api, 'three weeks after a restart and a send');
});
