/**
 * GET /messages/{id}/read_receipts of messages to a channel of `--users`, without HTTP: the server's own Store
 * and Runtime in this process (as bench/lib/organization.ts writes them), reopened from the data directory
 * after a snapshot, so that each holder's unread set and user actor are read from it as after a boot. The
 * two messages lie in different parts of the history (a part of a stored unread set is 8,192 ids), so that
 * each first ask reads its part of every holder's set. For each: the longest turn of the event loop and the
 * wall time of its first ask, then of a second; reopened twice, each way asked first once.
 *
 * - the baseline: readReceipts at once, in one turn, as the route did before prepareReadReceipts;
 * - now: prepareReadReceipts (the holders looked up a slice a turn), then readReceipts, as the route does.
 *
 *   npx tsx bench/read-receipts.ts [--users 10000]
 */
import { parseArgs } from 'node:util';
import { writeOrganization } from './lib/organization.ts';
import { makeTempDir, removeTempDir } from './lib/proc.ts';
import { watchTurns } from './lib/turns.ts';
import { prepareReadReceipts, readReceipts, type ReceiptPrivacy } from '../actors/realm/messages/read-receipts.ts';
import { Runtime } from '../actors/runtime.ts';
import { settingValue } from '../actors/user/settings.ts';
import { Store } from '../snapshots/store.ts';

const { values } = parseArgs({ options: { users: { type: 'string', default: '10000' } } });
const users = Number(values.users);
/** Direct messages between two users that put the next channel message in another part of the stored sets. */
const SPACER = 9000;

const dir = makeTempDir('read-receipts-');
try {
  const written = await writeOrganization(dir, { users, name: 'large', channel: 'everyone' });
  const owner = { kind: 'user', userId: written.userIds[0]! } as const;
  const realmId = written.realm.realmId;
  await written.runtime.execute(realmId, { type: 'realm.update', caller: owner, settings: { enable_read_receipts: true }, permissions: {} });
  const messages: number[] = [];
  for (let round = 0; round < 2; round++) {
    const [sent] = await written.runtime.execute(realmId, { type: 'message.send', caller: owner, kind: 'channel', to: written.channelId, topic: 'news', content: `news ${round}`, client: 'bench' });
    if (sent?.type !== 'message.sent') throw new Error('no message sent');
    messages.push(sent.message.id);
    for (let start = 0; start < SPACER; start += 1000) {
      await Promise.all(Array.from({ length: 1000 }, () => written.runtime.execute(realmId, { type: 'message.send', caller: owner, kind: 'direct', to: [written.userIds[1]!], content: 'spacer', client: 'bench' })));
    }
  }
  // Half the holders read each message.
  for (const userId of written.userIds.filter((_, i) => i % 2 === 1)) {
    await written.runtime.execute(realmId, { type: 'message.flags', caller: { kind: 'user', userId }, messageIds: messages, op: 'add', flag: 'read' });
  }
  await written.runtime.snapshot();
  await written.store.close();

  console.log(`${users} users in the channel, ${messages.length} messages ${SPACER + 1} ids apart, half the holders read each`);
  // Twice reopened, each way asked first of a message once.
  for (const order of [[false, true], [true, false]]) {
    const store = new Store(dir, { waitForFlush: false });
    const runtime = new Runtime(store, { clock: { now: Date.now }, queues: { heartbeatMs: 50_000, idleTimeoutMs: 600_000, sweepMs: 1000 } });
    runtime.recover();
    const privacy: ReceiptPrivacy = {
      sendsReadReceipts: (id) => settingValue(runtime.userState(realmId, id).settings, 'send_read_receipts') === true,
      hasMuted: (id, other) => runtime.userState(realmId, id).mutedUsers.has(other),
    };
    const ask = async (label: string, messageId: number, prepared: boolean) => {
      const start = performance.now();
      const watch = watchTurns();
      if (prepared) await prepareReadReceipts(runtime.realmState(realmId), owner.userId, messageId, privacy);
      const readers = readReceipts(runtime.realmState(realmId), owner.userId, messageId, privacy);
      const wall = performance.now() - start;
      await new Promise((resolve) => setImmediate(resolve));
      console.log(`${label.padEnd(60)} longest turn ${watch().toFixed(0).padStart(5)} ms, wall ${wall.toFixed(0).padStart(5)} ms (${readers.length} readers)`);
    };
    console.log('reopened');
    for (const [i, prepared] of order.entries()) {
      const way = prepared ? 'now (looked up a slice a turn)' : 'baseline (at once)';
      await ask(`message ${i + 1}, first ask, ${way}`, messages[i]!, prepared);
      await ask(`message ${i + 1}, again, ${way}`, messages[i]!, prepared);
    }
    await store.close();
  }
} finally {
  removeTempDir(dir);
}
