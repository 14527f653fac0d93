import type { RealmEmoji } from './state.ts';

export type EmojiChange =
  | { type: 'emoji.added'; emoji: RealmEmoji }
  | { type: 'emoji.deactivated'; id: number };
