import { join } from 'node:path';

export interface OrganizationSpec {
  users: number;
  /** the users after the owner are `${name}-user-${i}@example.com`, named `${Name} User ${i}` */
  name: string;
  /** the channel the users are subscribed to */
  channel: string;
  /** how many of the users, from the owner on, the channel has (default: all) */
  members?: number;
  /** how long the store keeps the log a snapshot trimmed (default: the server's; 0: not at all) */
  archiveRetentionMs?: number;
  /**
   * Keep the full-text index (search.sqlite in `dir`) as the server does, written as each commit is durable:
   * without it the server's first start builds the index from every message in the background (searches are
   * refused until then; 275 s at 10,000,000 when boot built it).
   */
  searchIndex?: boolean;
}

/**
 * Opens `dir` with the server's own `Store` and `Runtime` (as src/app.ts does) and writes the organization
 * the server's first start makes (src/bootstrap.ts): an owner who has no password (its zuliprc in `dir`)
 * and `users - 1` more, subscribed to one channel (all of them, or the first `members`). The server's code is imported here, so that a
 * benchmark's measuring side that never calls this never loads it.
 */
export async function writeOrganization(dir: string, spec: OrganizationSpec) {
  const { Runtime } = await import('../../actors/runtime.ts');
  const { Store } = await import('../../snapshots/store.ts');
  const { Role } = await import('../../actors/realm/state.ts');
  const { channelKey } = await import('../../actors/realm/channels/state.ts');
  const { DEFAULT_REALM_NAME, writeZuliprc } = await import('../../src/bootstrap.ts');
  const { SqliteSearchIndex } = await import('../../snapshots/search-index.ts');

  const store = new Store(dir, { waitForFlush: true, ...(spec.archiveRetentionMs === undefined ? {} : { archiveRetentionMs: spec.archiveRetentionMs }) });
  const search = spec.searchIndex ? new SqliteSearchIndex(dir) : null;
  const runtime = new Runtime(store, { ...(search ? { search } : {}), clock: { now: Date.now }, queues: { heartbeatMs: 50_000, idleTimeoutMs: 600_000, sweepMs: 1000 } });
  runtime.recover();
  const realm = await runtime.createRealm('', DEFAULT_REALM_NAME);
  const title = spec.name[0]!.toUpperCase() + spec.name.slice(1);
  const userIds: number[] = [];
  for (let i = 0; i < spec.users; i++) {
    const [created] = await runtime.execute(realm.realmId, {
      type: 'user.create', caller: { kind: 'operator' }, email: i === 0 ? 'owner@example.com' : `${spec.name}-user-${i}@example.com`,
      fullName: i === 0 ? 'Owner' : `${title} User ${i}`, passwordHash: null, ...(i === 0 ? { role: Role.owner, canCreateUsers: true } : {}),
    });
    if (created?.type !== 'user.created') throw new Error('user.create made no user');
    userIds.push(created.user.userId);
    if (i === 0) await writeZuliprc(join(dir, 'zuliprc'), created.user.email, created.user.apiKey, 'http://127.0.0.1');
  }
  await runtime.execute(realm.realmId, {
    type: 'channel.subscribe', caller: { kind: 'user', userId: userIds[0]! }, channels: [{ name: spec.channel, description: '' }], principals: userIds.slice(0, spec.members ?? userIds.length),
    options: { inviteOnly: false, isWebPublic: false, messageRetentionDays: null, isDefault: false, permissions: {} }, authorizationErrorsFatal: true,
  });
  const channelId = runtime.realmState(realm.realmId).channelIdByName.get(channelKey(spec.channel))!;
  return { store, runtime, realm, userIds, channelId, search };
}
