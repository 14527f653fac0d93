/** A channel folder: a named group of channels in the left sidebar, which administrators arrange. */
export interface ChannelFolder {
  id: number;
  name: string;
  description: string;
  renderedDescription: string;
  /** UNIX seconds */
  dateCreated: number;
  creatorId: number | null;
  isArchived: boolean;
}

/**
 * The realm's folders in display order (`order` is the index). Replaced whole by every change, never edited
 * in place: a snapshot record may share it. Snapshots written before folders existed load with none.
 */
export interface ChannelFolderStore {
  list: readonly ChannelFolder[];
  nextId: number;
}

export const emptyChannelFolderStore = (): ChannelFolderStore => ({ list: [], nextId: 1 });
