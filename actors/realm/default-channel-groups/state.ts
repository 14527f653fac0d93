/** A named set of default channels offered together to new users, which administrators arrange. */
export interface DefaultChannelGroup {
  id: number;
  name: string;
  description: string;
  channelIds: readonly number[];
}

/** In the order they were made; replaced whole by every change (plain data, stored as it is). */
export interface DefaultChannelGroupStore {
  list: readonly DefaultChannelGroup[];
  nextId: number;
}

export const emptyDefaultChannelGroupStore = (): DefaultChannelGroupStore => ({ list: [], nextId: 1 });
