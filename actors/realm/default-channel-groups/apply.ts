import type { RealmState } from '../state.ts';
import type { DefaultChannelGroupChange } from './changes.ts';

export function applyDefaultChannelGroupChange(state: RealmState, change: DefaultChannelGroupChange): void {
  const { list, nextId } = state.defaultChannelGroups;
  switch (change.type) {
    case 'default_channel_group.created':
      state.defaultChannelGroups = { list: [...list, { ...change.group }], nextId: Math.max(nextId, change.group.id + 1) };
      break;
    case 'default_channel_group.updated':
      state.defaultChannelGroups = { list: list.map((group) => (group.id === change.group.id ? { ...change.group } : group)), nextId };
      break;
    case 'default_channel_group.deleted':
      state.defaultChannelGroups = { list: list.filter((group) => group.id !== change.id), nextId };
      break;
    default: {
      const unknown: never = change;
      throw new Error(`unknown default channel group change ${JSON.stringify(unknown)}`);
    }
  }
}
