/**
 * Presence answers with everyone online in a large organization, without HTTP: the server's own Store and
 * Runtime in this process (as bench/lib/organization.ts opens them), every user's presence reported in the
 * last minute. Each answer is made as the route makes it, down to the body's bytes (src/routes/presence.ts),
 * and the same answer by the old walk (every entry of the realm checked and made an object, the whole answer
 * serialized per request), in the same run, after checking that the two say the same:
 *
 * - a full answer (POST /users/me/presence slim, GET /realm/presence legacy) after nothing changed, after one
 *   report (as every poll of a realm this large follows others' reports), after a user's settings changed;
 * - an incremental poll (`last_update_id`) after 100 reports;
 * - 50 full answers in one turn, each after its own user's report (requests arriving together).
 *
 *   npx tsx bench/presence.ts [--users 10000] [--runs 20]
 */
import { isDeepStrictEqual, parseArgs } from 'node:util';
import { writeOrganization } from './lib/organization.ts';
import { makeTempDir, removeTempDir } from './lib/proc.ts';
import { watchTurns } from './lib/turns.ts';
import { DEFAULT_HISTORY_LIMIT_DAYS, legacyPresence, modernPresence, realmPresences, showsPresence, type PresenceQuery } from '../actors/presence/views.ts';
import type { PresenceStore } from '../actors/presence/store.ts';
import type { RealmState } from '../actors/realm/state.ts';
import { accessFilter } from '../actors/realm/user-access.ts';
import { displayEmail } from '../actors/realm/email-visibility.ts';
import { PartsFields } from '../src/http/envelope.ts';

const { values } = parseArgs({ options: { users: { type: 'string', default: '10000' }, runs: { type: 'string', default: '20' } } });
const users = Number(values.users);
const runs = Number(values.runs);

/** The walk before the log and the kept segments (actors/presence/views.ts at 8a58766), the answer serialized whole. */
function oldAnswer(store: PresenceStore, realm: RealmState, query: PresenceQuery): Uint8Array {
  const { lastUpdateId } = query;
  const incremental = lastUpdateId !== undefined && lastUpdateId > 0;
  const since = incremental ? -Infinity : query.now - (query.historyLimitDays ?? DEFAULT_HISTORY_LIMIT_DAYS) * 86_400;
  const presences: Record<string, unknown> = {};
  let newest = lastUpdateId ?? -1;
  const accessible = accessFilter(realm, query.viewerId);
  for (const [userId, entry] of store.entries(realm.realmId)) {
    if (accessible && !accessible.has(userId)) continue;
    if (lastUpdateId !== undefined && entry.updateId <= lastUpdateId) continue;
    if (entry.connectedAt < since) continue;
    const user = realm.users.get(userId);
    if (!showsPresence(store, realm, user)) continue;
    newest = Math.max(newest, entry.updateId);
    if (query.slim) presences[String(userId)] = modernPresence(entry, user);
    else presences[displayEmail(realm, user)] = legacyPresence(entry, user, query.now);
  }
  return Buffer.from(JSON.stringify({ result: 'success', msg: '', presences, server_timestamp: query.now, presence_last_update_id: newest }));
}

/** The answer as the route writes it now. */
function newAnswer(store: PresenceStore, realm: RealmState, query: PresenceQuery): Uint8Array {
  const { parts, lastUpdateId } = realmPresences(store, realm, query);
  // In the route's writer, as the socket takes it: valid until the next answer is written.
  return new PartsFields(['"presences":', ...parts, `,${JSON.stringify({ server_timestamp: query.now, presence_last_update_id: lastUpdateId }).slice(1, -1)}`]).write();
}

type Answer = typeof oldAnswer;

/** The longest turn of the event loop while `run` ran (it is synchronous: the whole of it), and its CPU, in ms. */
async function timed(run: () => void): Promise<{ turnMs: number; cpuMs: number }> {
  await new Promise((resolve) => setImmediate(resolve));
  const cpu = process.cpuUsage();
  const watch = watchTurns();
  await new Promise((resolve) => setImmediate(resolve));
  run();
  await new Promise((resolve) => setImmediate(resolve));
  const turnMs = watch();
  const used = process.cpuUsage(cpu);
  return { turnMs, cpuMs: (used.user + used.system) / 1000 };
}

const f = (n: number) => (n < 10 ? n.toFixed(1) : n.toFixed(0));
const spread = (ms: number[]) => {
  const sorted = [...ms].sort((a, b) => a - b);
  return `median ${f(sorted[Math.floor(sorted.length / 2)]!)} ms, max ${f(sorted.at(-1)!)} ms`;
};

const dir = makeTempDir('presence-');
try {
  const written = performance.now();
  const { runtime, store: persistence, realm: created, userIds } = await writeOrganization(dir, { users, name: 'large', channel: 'everyone' });
  const realmId = created.realmId;
  const store = runtime.presence;
  const realm = () => runtime.realmState(realmId);
  let now = Math.floor(Date.now() / 1000);
  for (const userId of userIds) runtime.recordPresence(realmId, userId, 'active', now - 30);
  console.log(`${users} users, everyone's presence reported; written in ${((performance.now() - written) / 1000).toFixed(1)} s`);
  let reporter = 0;
  /** The next user reports, a minute after their last report: their entry changes, as before each poll. */
  const report = () => {
    now += 1;
    runtime.recordPresence(realmId, userIds[reporter++ % userIds.length]!, 'active', now + 60);
  };
  const viewerId = userIds[1]!;

  const same = (label: string, query: PresenceQuery) => {
    const [before, after] = [oldAnswer(store, realm(), query), newAnswer(store, realm(), query)].map((bytes) => JSON.parse(Buffer.from(bytes).toString()));
    if (!isDeepStrictEqual(before, after)) throw new Error(`${label}: the answers differ`);
  };
  /** `runs` answers, each after `before` (untimed), by each way in turn. */
  const row = async (label: string, query: () => PresenceQuery, before: () => unknown) => {
    const times = new Map<Answer, number[]>([[oldAnswer, []], [newAnswer, []]]);
    for (let run = 0; run < runs; run++) {
      for (const [answer, ms] of times) {
        await before();
        const q = query();
        same(label, q);
        await before();
        const start = performance.now();
        answer(store, realm(), q);
        ms.push(performance.now() - start);
      }
    }
    console.log(`${label}: old walk ${spread(times.get(oldAnswer)!)}; now ${spread(times.get(newAnswer)!)}`);
  };
  const full = (slim: boolean) => () => ({ slim, lastUpdateId: slim ? 0 : undefined, now: now + 60, viewerId });
  const nothing = () => {};
  await row('full answer (slim), nothing changed', full(true), nothing);
  await row('full answer (slim), after a report', full(true), report);
  await row('full answer (legacy), after a report', full(false), report);
  let personal = 0;
  // A user's settings change moves the version the kept segments check every user's sharing against.
  const settingsChange = () =>
    runtime.executeUser(realmId, userIds[2]!, { type: 'settings.update', settings: { left_side_userlist: personal++ % 2 === 0 } });
  await row('full answer (slim), after a user\'s settings changed', full(true), settingsChange);
  let checkpoint = 0;
  await row('incremental poll, 100 reports since', () => ({ slim: true, lastUpdateId: checkpoint, now: now + 60, viewerId }), () => {
    checkpoint = store.log(realmId)!.ids.at(-1)!;
    for (let i = 0; i < 100; i++) report();
  });

  for (const answer of [oldAnswer, newAnswer]) {
    const turns: number[] = [];
    const cpu: number[] = [];
    for (let run = 0; run < 5; run++) {
      const measured = await timed(() => {
        for (let i = 0; i < 50; i++) {
          report();
          answer(store, realm(), full(true)());
        }
      });
      turns.push(measured.turnMs);
      cpu.push(measured.cpuMs);
    }
    console.log(`50 full answers (slim) in one turn, each after a report, ${answer === oldAnswer ? 'old walk' : 'now'}: longest turn ${spread(turns)}; CPU ${spread(cpu)}`);
  }
  await runtime.settled();
  await persistence.close();
} finally {
  removeTempDir(dir);
}
