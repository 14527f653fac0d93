import { FORMAT_VERSION } from '../snapshots/codec.ts';
import type { ApiEvent } from './events.ts';
import type { BodyWrite, Persistence, SnapshotRecord } from './persistence.ts';
import type { QueueRegistry, Routed } from './queue/registry.ts';
import { LEGACY_QUEUE_KIND, QUEUE_KIND, writeQueues } from './queue/snapshot.ts';
import { bodiesSaved, realmSnapshot, restoreUnsaved, type RealmSnapshot } from './realm/snapshot.ts';
import type { RealmState } from './realm/state.ts';
import type { ActorRegistry } from './registry.ts';
import { userToRecord } from './user/state.ts';

/** The snapshot record of events a snapshot's changes announced that had not reached their queues. */
export const UNDELIVERED: [string, string] = ['undelivered', 'events'];
export type UndeliveredRecord = { event: ApiEvent; queueIds: string[] }[];

/**
 * Writes a snapshot at log position `seq` of every actor and event queue changed since the last one (all
 * queues with `final`, and the directory is then marked clean), with the events of `undelivered` commits
 * (in flight: their changes are in the actors, their events not yet in their queues). On failure nothing
 * was written and what was to be written is marked again. Returns how many records it wrote.
 */
export async function writeSnapshot(
  registry: ActorRegistry,
  queueRegistry: QueueRegistry,
  undeliveredCommits: ReadonlyMap<number, Routed[]>,
  store: Persistence,
  seq: number,
  final: boolean,
): Promise<number> {
  const { dirty } = registry;
  const records: SnapshotRecord[] = [];
  const record = (kind: string, id: string, data: unknown) => records.push({ v: FORMAT_VERSION, seq, kind, id, data });
  const deleted: [string, string][] = [];
  const dirtyRealms = [...dirty.realms];
  const dirtyUsers = [...dirty.users];
  const removedQueues = [...dirty.removedQueues];
  const legacyQueues = [...dirty.legacyQueues];
  dirty.realms.clear();
  dirty.users.clear();
  dirty.removedQueues.clear();
  dirty.legacyQueues.clear();
  const taken: [RealmState, RealmSnapshot][] = [];
  const bodies: BodyWrite[] = [];
  for (const realmId of dirtyRealms) {
    const state = registry.realmState(realmId);
    const snapshot = realmSnapshot(state);
    taken.push([state, snapshot]);
    record('realm', String(realmId), snapshot.realm);
    for (const [kind, id, data] of snapshot.chunks) {
      if (data) record(kind, id, data);
      else deleted.push([kind, id]);
    }
    for (const [messageId, body] of snapshot.bodies) bodies.push({ realmId, messageId, body });
  }
  for (const key of dirtyUsers) {
    const snapshot = registry.users.get(key)?.getSnapshot();
    if (snapshot) record('user', key, { value: snapshot.value, state: userToRecord(snapshot.context.state) });
  }
  const queues = final ? queueRegistry.all() : queueRegistry.unsaved();
  const written = writeQueues(queues, queueRegistry.payloads);
  for (const { kind, id, data } of written.records) record(kind, id, data);
  for (const queue of queues) queue.unsaved = false;
  for (const id of removedQueues) deleted.push([QUEUE_KIND, id]);
  for (const id of legacyQueues) deleted.push([LEGACY_QUEUE_KIND, id]);
  deleted.push(...written.deleted);
  // The snapshot covers changes whose events are not in their queues yet (their commit is in flight): the
  // queues' records above lack them, and a replay would not announce them again. They are stored beside.
  const undelivered: UndeliveredRecord = [];
  for (const list of undeliveredCommits.values()) {
    for (const { event, queues: to } of list) undelivered.push({ event, queueIds: to.map((queue) => queue.id) });
  }
  if (undelivered.length > 0) record(UNDELIVERED[0], UNDELIVERED[1], undelivered);
  else deleted.push(UNDELIVERED);
  try {
    await store.writeSnapshots(seq, records, deleted, final, bodies);
    for (const [state, snapshot] of taken) bodiesSaved(state, snapshot);
  } catch (error) {
    // Nothing was written: these actors are still only covered by the log, which was not trimmed either.
    for (const realmId of dirtyRealms) dirty.realms.add(realmId);
    for (const [state, snapshot] of taken) restoreUnsaved(state, snapshot);
    for (const key of dirtyUsers) dirty.users.add(key);
    for (const id of removedQueues) dirty.removedQueues.add(id);
    for (const id of legacyQueues) dirty.legacyQueues.add(id);
    for (const queue of queues) queue.unsaved = true;
    written.undo();
    throw error;
  }
  return records.length;
}
