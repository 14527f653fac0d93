import { rmSync } from 'node:fs';
import t from 'tap';
import { openRuntime } from '../helpers/runtime.ts';
import { ChatError } from '../../actors/errors.ts';
import type { RealmCommand } from '../../actors/realm/commands.ts';
import { decideRealm } from '../../actors/realm/decide.ts';
import { Role, realmToRecord } from '../../actors/realm/state.ts';
import { Runtime } from '../../actors/runtime.ts';
import { tempDir } from '../helpers/server.ts';

const operator = { kind: 'operator' } as const;
let now = Date.UTC(2026, 0, 1);
const clock = { now: () => now };

const open = (dir: string) => openRuntime(dir, clock);

const user = (email: string, role: Role = Role.member): RealmCommand => ({
  type: 'user.create', caller: operator, email, fullName: email.split('@')[0]!, passwordHash: null, role,
});

/** A realm's history: the same steps whichever way the runtime is later rebuilt. */
async function history(runtime: Runtime, midway?: () => Promise<void>) {
  const realm = await runtime.createRealm('', 'Test');
  const id = realm.realmId;
  await runtime.execute(id, user('owner@example.com', Role.owner));
  await runtime.execute(id, user('ann@example.com'));
  now += 1000;
  await runtime.execute(id, user('bob@example.com', Role.administrator));
  if (midway) await midway();
  await runtime.execute(id, { type: 'user.deactivate', caller: { kind: 'user', userId: 1 }, userId: 2 });
  await runtime.execute(id, { type: 'user.update', caller: { kind: 'user', userId: 1 }, userId: 3, fullName: 'Robert', role: Role.moderator });
  await runtime.execute(id, { type: 'user.regenerate_api_key', caller: { kind: 'user', userId: 3 }, userId: 3 });
  return id;
}

// Each way of rebuilding a realm must give the very same state: replay runs the same apply as live.
t.test('a realm restored from snapshots, from the log, or from both equals the live one', async (t) => {
  const ways: Record<string, (runtime: Runtime) => Promise<number>> = {
    'log only': (runtime) => history(runtime),
    'snapshot at the end': async (runtime) => {
      const id = await history(runtime);
      await runtime.snapshot();
      return id;
    },
    'snapshot midway, log after': (runtime) => history(runtime, async () => void (await runtime.snapshot())),
  };
  for (const [way, build] of Object.entries(ways)) {
    const dir = tempDir();
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const live = open(dir);
    const realmId = await build(live.runtime);
    const expected = realmToRecord(live.runtime.realmState(realmId));
    const userStates = [...live.runtime.users.entries()].map(([key, actor]) => [key, actor.getSnapshot().value]);
    await live.store.close();

    const restored = open(dir);
    t.same(realmToRecord(restored.runtime.realmState(realmId)), expected, `${way}: same realm state`);
    t.same([...restored.runtime.users.entries()].map(([key, actor]) => [key, actor.getSnapshot().value]), userStates, `${way}: same user actors`);
    t.equal(restored.runtime.realms.get(realmId)!.getSnapshot().value, 'ready', `${way}: realm is ready`);
    t.equal(restored.runtime.userActor(realmId, 2)!.getSnapshot().value, 'deactivated', `${way}: deactivated user actor`);
    t.equal(restored.runtime.logPosition, live.runtime.logPosition, `${way}: log position continues`);
    if (way !== 'log only') t.ok(restored.recovered.snapshots > 0, `${way}: loaded snapshots`);
    // The restored runtime keeps going: the next user gets the next id.
    const [created] = await restored.runtime.execute(realmId, user('cy@example.com'));
    t.equal(created?.type === 'user.created' && created.user.userId, 4, `${way}: ids continue`);
    await restored.store.close();
  }
});

t.test('a snapshot trims the log it covers', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { store, runtime } = open(dir);
  await history(runtime);
  t.ok(store.logCount() > 0, 'log has entries');
  await runtime.snapshot();
  t.equal(store.logCount(), 0, 'log trimmed');
  t.equal(store.snapshotSeq(), runtime.logPosition, 'snapshot covers the whole log');
  await store.close();
});

// An apply that throws is a fault (decide let through what apply cannot take): its caller gets the error, and
// the log keeps no hole where it would have been, so that the writes after it survive a restart.
t.test('a change whose apply throws takes no log position, and the writes after it survive a restart', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const live = open(dir);
  const id = await history(live.runtime);
  const position = live.runtime.logPosition;
  const users = live.runtime.realmState(id).users;
  // The fault: the realm's user table refuses the next insertion.
  Object.defineProperty(users, 'set', { configurable: true, value: () => { throw new Error('injected apply fault'); } });
  await t.rejects(live.runtime.execute(id, user('dee@example.com')), { message: 'injected apply fault' }, 'the caller gets the fault');
  delete (users as { set?: unknown }).set;
  t.equal(live.runtime.logPosition, position, 'the failed change took no log position');
  await live.runtime.execute(id, user('eve@example.com'));
  t.equal(live.runtime.logPosition, position + 1, 'the next write takes the next position');
  const expected = realmToRecord(live.runtime.realmState(id));
  await live.store.close();

  const restored = open(dir);
  t.equal(restored.recovered.tornTail, null, 'the log has no torn tail');
  t.equal(restored.runtime.logPosition, position + 1, 'the restart reads the whole log');
  t.ok(restored.runtime.realmState(id).userIdByEmail.has('eve@example.com'), 'the write after the fault is there');
  t.same(realmToRecord(restored.runtime.realmState(id)), expected, 'same realm state as before the restart');
  await restored.store.close();
});

// The same for a user's own changes: the caller gets the fault, nothing is logged, and the account goes on
// taking writes (an actor that failed inside xstate ignored every later one, and its error ended the process).
t.test('a user change whose apply throws takes no log position, and the user takes the writes after it', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const live = open(dir);
  const id = await history(live.runtime);
  const position = live.runtime.logPosition;
  const snippets = live.runtime.userState(id, 3).snippets;
  Object.defineProperty(snippets, 'set', { configurable: true, value: () => { throw new Error('injected apply fault'); } });
  await t.rejects(live.runtime.executeUser(id, 3, { type: 'snippet.create', title: 'lost', content: 'x' }), { message: 'injected apply fault' }, 'the caller gets the fault');
  delete (snippets as { set?: unknown }).set;
  t.equal(live.runtime.logPosition, position, 'the failed change took no log position');
  await live.runtime.executeUser(id, 3, { type: 'snippet.create', title: 'kept', content: 'y' });
  t.equal(live.runtime.logPosition, position + 1, 'the next write takes the next position');
  t.same([...live.runtime.userState(id, 3).snippets.values()].map((snippet) => snippet.title), ['kept'], 'the write after the fault is applied');
  await live.store.close();

  const restored = open(dir);
  t.equal(restored.recovered.tornTail, null, 'the log has no torn tail');
  t.same([...restored.runtime.userState(id, 3).snippets.values()].map((snippet) => snippet.title), ['kept'], 'the restart has the write after the fault');
  t.equal(restored.runtime.userActor(id, 3)!.getSnapshot().value, 'active', 'the account is active');
  await restored.store.close();
});

t.test('decide refuses what the rules forbid, and changes nothing', async (t) => {
  const dir = tempDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { store, runtime } = open(dir);
  const id = await history(runtime);
  const state = runtime.realmState(id);
  const before = JSON.stringify(realmToRecord(state));
  const member = { kind: 'user', userId: 4 } as const;
  await runtime.execute(id, user('member@example.com'));
  const cases: [string, RealmCommand, RegExp][] = [
    ['duplicate email', user('ANN@example.com'), /already in use/],
    ['member creates user', { ...user('x@example.com'), caller: member } as RealmCommand, /administrator/],
    ['admin without create-users permission', { ...user('x@example.com'), caller: { kind: 'user', userId: 3 } } as RealmCommand, /administrator|not authorized/],
    ['only owner deactivated', { type: 'user.deactivate', caller: { kind: 'user', userId: 1 }, userId: 1 }, /only organization owner/],
    ['already deactivated', { type: 'user.deactivate', caller: { kind: 'user', userId: 1 }, userId: 2 }, /already deactivated/],
    ['reactivate active user', { type: 'user.reactivate', caller: { kind: 'user', userId: 1 }, userId: 3 }, /already active/],
    ['unknown user', { type: 'user.update', caller: { kind: 'user', userId: 1 }, userId: 99, fullName: 'X' }, /No such user/],
    ['only owner demoted', { type: 'user.update', caller: { kind: 'user', userId: 1 }, userId: 1, role: Role.member }, /only organization owner/],
    // The name rules are the realm's, whoever asks (realm/names.ts): the operator's commands too.
    ['look-alike name', { ...user('x@example.com'), fullName: 'Ann\u202Egnp.exe' } as RealmCommand, /Invalid characters in name!/],
    ['blank name', { ...user('x@example.com'), fullName: '  ' } as RealmCommand, /Name too short!/],
    ['name too long', { type: 'user.update', caller: operator, userId: 3, fullName: 'x'.repeat(101) }, /Name too long!/],
  ];
  const afterMember = JSON.stringify(realmToRecord(state));
  t.not(afterMember, before, 'the extra member was added');
  for (const [name, command, message] of cases) {
    t.throws(() => decideRealm(state, command, clock), { message }, name);
    try {
      decideRealm(state, command, clock);
    } catch (error) {
      t.ok(error instanceof ChatError, `${name}: a ChatError`);
    }
  }
  t.equal(JSON.stringify(realmToRecord(state)), afterMember, 'state untouched by refused commands');
  await store.close();
});
