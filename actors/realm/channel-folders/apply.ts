import type { RealmState } from '../state.ts';
import type { ChannelFolderChange } from './changes.ts';

export function applyChannelFolderChange(state: RealmState, change: ChannelFolderChange): void {
  const { list, nextId } = state.channelFolders;
  switch (change.type) {
    case 'channel_folder.created':
      state.channelFolders = { list: [...list, { ...change.folder }], nextId: Math.max(nextId, change.folder.id + 1) };
      break;
    case 'channel_folder.updated':
      state.channelFolders = { list: list.map((folder) => (folder.id === change.id ? { ...folder, ...change.fields } : folder)), nextId };
      break;
    case 'channel_folders.reordered': {
      const byId = new Map(list.map((folder) => [folder.id, folder]));
      state.channelFolders = { list: change.order.flatMap((id) => byId.get(id) ?? []), nextId };
      break;
    }
    default: {
      const unknown: never = change;
      throw new Error(`unknown channel folder change ${JSON.stringify(unknown)}`);
    }
  }
}
