import type { ChannelFolder } from './state.ts';

/** A folder's fields a change sets; only those that changed. */
export type ChannelFolderFields = Partial<Pick<ChannelFolder, 'name' | 'description' | 'renderedDescription' | 'isArchived'>>;

export type ChannelFolderChange =
  | { type: 'channel_folder.created'; folder: ChannelFolder }
  | { type: 'channel_folder.updated'; id: number; fields: ChannelFolderFields }
  | { type: 'channel_folders.reordered'; order: readonly number[] };
