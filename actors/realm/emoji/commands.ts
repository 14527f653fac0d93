import type { Caller } from '../commands.ts';

export type EmojiCommand =
  /** the image is already stored under `fileName` (and its still under `stillFileName`) by the front end */
  | { type: 'emoji.add'; caller: Caller; name: string; fileName: string; stillFileName: string | null }
  | { type: 'emoji.deactivate'; caller: Caller; name: string };
