import { channelKey } from './realm/channels/state.ts';
import { SYSTEM_GROUPS } from './realm/groups/state.ts';
import type { RealmState } from './realm/state.ts';

/**
 * Checks that a realm's indexes agree with its records: what a snapshot restore or a replay must keep
 * true. Returns the problems found, empty when the realm is sound.
 */
export function verifyRealm(state: RealmState): string[] {
  const problems: string[] = [];
  const where = `realm ${state.realmId}`;
  for (const user of state.users.values()) {
    if (state.userIdByEmail.get(user.email.toLowerCase()) !== user.userId) problems.push(`${where}: email index misses user ${user.userId}`);
    if (user.userId >= state.nextUserId) problems.push(`${where}: user ${user.userId} is not below nextUserId`);
  }
  if (state.userIdByEmail.size !== state.users.size) problems.push(`${where}: email index has ${state.userIdByEmail.size} entries for ${state.users.size} users`);
  for (const { name } of SYSTEM_GROUPS) if (!state.systemGroupIds.has(name)) problems.push(`${where}: system group ${name} missing`);
  for (const group of state.groups.values()) {
    for (const id of group.subgroups) if (!state.groups.has(id)) problems.push(`${where}: group ${group.id} names missing subgroup ${id}`);
    for (const id of group.members) if (!state.users.has(id)) problems.push(`${where}: group ${group.id} names missing user ${id}`);
  }
  for (const channel of state.channels.values()) {
    if (state.channelIdByName.get(channelKey(channel.name)) !== channel.id) problems.push(`${where}: name index misses channel ${channel.id}`);
  }
  for (const [channelId, subscribers] of state.subscriptions) {
    if (!state.channels.has(channelId)) problems.push(`${where}: subscriptions of missing channel ${channelId}`);
    for (const userId of subscribers.keys()) {
      if (!state.subscribedBy.get(userId)?.has(channelId)) problems.push(`${where}: user ${userId} in channel ${channelId} but not indexed`);
    }
  }
  for (const [userId, channels] of state.subscribedBy) {
    for (const channelId of channels) {
      if (!state.subscriptions.get(channelId)?.has(userId)) problems.push(`${where}: index says user ${userId} is in channel ${channelId}`);
    }
  }
  return problems;
}
