import type { Caller } from '../commands.ts';

export type DefaultChannelGroupCommand =
  | { type: 'default_channel_group.create'; caller: Caller; name: string; description: string; channelNames: readonly string[]; maxGroups: number }
  | { type: 'default_channel_group.update'; caller: Caller; id: number; name?: string; description?: string }
  | { type: 'default_channel_group.channels'; caller: Caller; id: number; op: 'add' | 'remove'; channelNames: readonly string[] }
  | { type: 'default_channel_group.delete'; caller: Caller; id: number };
