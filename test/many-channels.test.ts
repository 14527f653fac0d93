import t from 'tap';
import { startTestServer, type ApiClient } from './helpers/server.ts';
import { channel, sendDirect, sendToChannel } from './helpers/messages.ts';

/**
 * A member of more channels than a fetch reads into memory (query.ts CACHED_LISTS): each channel's list is
 * read when the walk reaches it, newest first by the channel summary (newest-ids.ts). Every window is
 * compared with the messages the member may read, through a move, a deletion, snapshots and a restart, with a
 * key cache of 16 so that nearly every list is read back from the data directory.
 */
t.test('GET /messages over a member\'s 600 channels: exact windows at every anchor, through changes and a restart', async (t) => {
  const first = await startTestServer(t, { rateLimit: null, messageKeyCache: 16 });
  const { api, server } = first;
  const ann = await api.createUser('ann@example.com', 'Ann');
  const names = Array.from({ length: 600 }, (_, i) => `channel ${i}`);
  t.equal((await api.post('/users/me/subscriptions', { subscriptions: names.map((name) => ({ name })), principals: [1, ann.userId], send_new_subscription_messages: false })).status, 200);
  const elsewhere = await channel(api, 'elsewhere', [1], { send_new_subscription_messages: false });
  const secret = await channel(api, 'secret', [1], { invite_only: true, history_public_to_subscribers: false, send_new_subscription_messages: false });

  /** what Ann may read in `[]` (her channels and conversations), and what `channels:public` holds */
  const hers = new Set<number>();
  const publicIds = new Set<number>();
  const send = async (to: string | number, mine: boolean, isPublic = true) => {
    const id = await sendToChannel(api, to, `topic ${hers.size % 7}`, 'hello');
    if (mine) hers.add(id);
    if (isPublic) publicIds.add(id);
    return id;
  };
  await send(secret, false, false);
  const inChannels: number[] = [];
  for (let round = 0; round < 3; round++) {
    for (let start = 0; start < 600; start += 100) {
      // Every channel gets a message a round, in an order that spreads each channel's ids over the history.
      inChannels.push(...(await Promise.all(Array.from({ length: 100 }, (_, i) => send(`channel ${((start + i) * 7 + round * 13) % 600}`, true)))));
    }
    await send(elsewhere, false);
    hers.add(await sendDirect(api, [ann.userId], `round ${round}`));
  }
  t.equal((await api.post('/users/me/subscriptions', { subscriptions: [{ name: 'secret' }], principals: [ann.userId], send_new_subscription_messages: false })).status, 200);
  await send(secret, true, false);

  const ids = (list: { id: number }[]) => list.map((message) => message.id);
  const check = async (client: ApiClient, label: string) => {
    for (const [narrow, expected] of [[[], hers], [[{ operator: 'channels', operand: 'public' }], publicIds]] as const) {
      const all = [...expected].sort((a, b) => a - b);
      const middle = all[Math.floor(all.length / 2)]!;
      const windows: [number | string, number, number][] = [['newest', 50, 0], ['oldest', 0, 50], [middle, 60, 60], [all[3]!, 10, 5], [all[all.length - 4]!, 5, 10], ['first_unread', 20, 20]];
      for (const [anchor, before, after] of windows) {
        const { body } = await client.get('/messages', { anchor, num_before: before, num_after: after, narrow });
        const at = anchor === 'newest' ? all.length - 1 : anchor === 'oldest' || anchor === 'first_unread' ? 0 : all.indexOf(anchor as number);
        const want = all.slice(Math.max(0, at - before), at + after + 1);
        if (anchor === 'newest') want.splice(0, want.length, ...all.slice(-before));
        // `oldest` stands before every message: no message is at the anchor.
        if (anchor === 'oldest') want.splice(0, want.length, ...all.slice(0, after));
        t.same(ids(body.messages), want, `${label}: ${JSON.stringify(narrow)} at ${anchor}`);
        t.equal(body.found_oldest, want[0] === all[0], `${label}: ${JSON.stringify(narrow)} at ${anchor}: found_oldest`);
        t.equal(body.found_newest, want.at(-1) === all.at(-1), `${label}: ${JSON.stringify(narrow)} at ${anchor}: found_newest`);
      }
    }
  };
  const annApi = () => first.api.as(ann);
  await check(annApi(), 'at first');
  await server.runtime.snapshot();
  await check(annApi(), 'after a snapshot');

  // The newest message of one channel moves to a channel Ann is not in; the oldest of another is deleted.
  const newestOf = Math.max(...inChannels);
  t.equal((await api.patch(`/messages/${newestOf}`, { stream_id: elsewhere, propagate_mode: 'change_one', send_notification_to_old_thread: false, send_notification_to_new_thread: false })).status, 200);
  hers.delete(newestOf);
  const oldest = Math.min(...hers);
  t.equal((await api.delete(`/messages/${oldest}`)).status, 200);
  hers.delete(oldest);
  publicIds.delete(oldest);
  await check(annApi(), 'after a move and a deletion');
  await first.stop();

  const second = await startTestServer(t, { dataDir: first.dataDir, rateLimit: null, messageKeyCache: 16 });
  await check(second.api.as(ann), 'after a restart');
  const later = await sendToChannel(second.api, 'channel 0', 'late', 'after the restart');
  hers.add(later);
  publicIds.add(later);
  await check(second.api.as(ann), 'after a restart and a send');
});
