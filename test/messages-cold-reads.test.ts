import t from 'tap';
import { channel, sendToChannel } from './helpers/messages.ts';
import { startTestServer, type ApiClient } from './helpers/server.ts';
import { cachedViews } from '../actors/realm/messages/view-cache.ts';

const TOPICS = 10;

/** Sends `count` messages to general, a hundred at a time, cycling through TOPICS topics; returns their ids. */
async function history(api: ApiClient, count: number): Promise<number[]> {
  const ids: number[] = [];
  for (let n = 0; n < count; n += 100) {
    const batch = Array.from({ length: Math.min(100, count - n) }, (_, i) => sendToChannel(api, 'general', `topic ${(n + i) % TOPICS}`, `note ${n + i}: the plan, in **bold**`));
    ids.push(...(await Promise.all(batch)));
  }
  return ids;
}

interface Page {
  messages: { id: number; content: string; reactions: { emoji_name: string }[]; flags: string[] }[];
}

/**
 * A page read once from a cold history (after a restart, its chunks and bodies on disk) is answered without
 * keeping its bodies or views (actors/realm/messages/second-use.ts): cold reads leave nothing for the
 * collector. Read again, it is kept, and changes made to it show as before.
 */
t.test('a cold page is answered as before the restart, kept only once read again, and shows later edits and reactions', async (t) => {
  const first = await startTestServer(t, { rateLimit: null });
  const ann = await first.api.createUser('ann@example.com', 'Ann');
  await channel(first.api, 'general', [1, ann.userId]);
  // Over a chunk of ids (2,000), so that the pages read below span two chunk records.
  const ids = await history(first.api, 2100);
  // The first page spans the ids 2,000 and 1,999; the second, of a topic, reaches back over 500 ids before them.
  const at = ids.findIndex((id) => id >= 2025);
  // A message deleted within the page: the chunk's ids are no longer at their positions.
  await first.api.delete(`/messages/${ids[at - 10]}`);
  await first.api.post(`/messages/${ids[at - 20]}/reactions`, { emoji_name: 'tada' });
  const pages = [
    { anchor: ids[at], num_before: 50, num_after: 0 },
    { anchor: ids[at - 100], num_before: 50, num_after: 0, narrow: [['channel', 'general'], ['topic', `topic ${(at - 100) % TOPICS}`]] },
  ];
  const read = async (api: ApiClient) => Promise.all(pages.map(async (params) => (await api.as(ann).get('/messages', params)).body as Page));
  const before = await read(first.api);
  t.same(before.map((page) => page.messages.length), [51, 51], 'the anchor and 50 before it');
  t.ok(before[0]!.messages.some((message) => message.id === 2000) && before[0]!.messages.some((message) => message.id === 1999), 'the first page spans two chunks');
  t.notOk(before[0]!.messages.some((message) => message.id === ids[at - 10]), 'the deleted message is not read');
  await first.stop();

  const second = await startTestServer(t, { dataDir: first.dataDir, rateLimit: null });
  const realm = () => second.server.runtime.realmState(1);
  const pageIds = new Set(before.flatMap((page) => page.messages.map((message) => message.id)));
  t.same(await read(second.api), before, 'read once from the cold history, each page is as before the restart');
  t.equal(realm().messages.bodies.cached, 0, 'no body read once is kept');
  t.equal(cachedViews(realm()), 0, 'nor any view');
  // The pages' two chunks were decoded for these reads, and are garbage once the next reads want others (paged.ts RECENT_CHUNKS).
  t.equal(realm().messages.byId.residentChunks, 0, 'nor any chunk');
  t.same(await read(second.api), before, 'read again, the same');
  t.equal(realm().messages.bodies.cached, pageIds.size, 'the bodies read a second time are kept');
  t.equal(cachedViews(realm()), pageIds.size, 'and their views');

  // Changes to messages whose views are kept now.
  const [edited, reacted, starred] = [ids[at - 5]!, ids[at - 15]!, ids[at - 25]!];
  t.equal((await second.api.patch(`/messages/${edited}`, { content: 'rewritten after the restart' })).status, 200);
  t.equal((await second.api.as(ann).post(`/messages/${reacted}/reactions`, { emoji_name: 'octopus' })).status, 200);
  t.equal((await second.api.as(ann).post('/messages/flags', { messages: [starred], op: 'add', flag: 'starred' })).status, 200);
  const [after] = await read(second.api);
  const byId = new Map(after!.messages.map((message) => [message.id, message]));
  t.equal(byId.get(edited)?.content, '<p>rewritten after the restart</p>', 'the edit shows');
  t.same(byId.get(reacted)?.reactions.map((reaction) => reaction.emoji_name), ['octopus'], 'the reaction shows');
  t.same(byId.get(ids[at - 20]!)?.reactions.map((reaction) => reaction.emoji_name), ['tada'], 'the reaction made before the restart stays');
  t.ok(byId.get(starred)?.flags.includes('starred'), 'the flag shows');
  const changed = [edited, reacted, starred];
  const unchanged = after!.messages.filter((message) => !changed.includes(message.id));
  t.same(unchanged, before[0]!.messages.filter((message) => !changed.includes(message.id)), 'the other messages are as they were');
  await second.stop();

  // And after another restart, the changes were stored.
  const third = await startTestServer(t, { dataDir: first.dataDir, rateLimit: null });
  const [again] = await read(third.api);
  t.same(again, after, 'the page after a second restart, cold again');
});
