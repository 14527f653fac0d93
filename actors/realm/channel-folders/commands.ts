import type { Caller } from '../commands.ts';

export type ChannelFolderCommand =
  | { type: 'channel_folder.create'; caller: Caller; name: string; description: string; maxFolders: number }
  | { type: 'channel_folder.update'; caller: Caller; id: number; name?: string; description?: string; isArchived?: boolean }
  | { type: 'channel_folders.reorder'; caller: Caller; order: readonly number[] };
