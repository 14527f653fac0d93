import type { DefaultChannelGroup } from './state.ts';

export type DefaultChannelGroupChange =
  | { type: 'default_channel_group.created'; group: DefaultChannelGroup }
  /** the group as it is after the change */
  | { type: 'default_channel_group.updated'; group: DefaultChannelGroup }
  | { type: 'default_channel_group.deleted'; id: number };
