import type { ChannelFolder, ChannelFolderStore } from './state.ts';

/** The API's channel folder object; `order` is its place in the list. */
export const channelFolderView = (folder: ChannelFolder, order: number) => ({
  id: folder.id,
  name: folder.name,
  description: folder.description,
  rendered_description: folder.renderedDescription,
  order,
  date_created: folder.dateCreated,
  creator_id: folder.creatorId,
  is_archived: folder.isArchived,
});

/** Every folder in display order, the archived ones only when asked for. */
export const channelFoldersView = (store: ChannelFolderStore, includeArchived: boolean) =>
  store.list.map(channelFolderView).filter((folder) => includeArchived || !folder.is_archived);
