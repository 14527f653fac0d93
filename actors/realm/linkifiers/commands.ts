import type { Caller } from '../commands.ts';

export type LinkifierCommand =
  | { type: 'linkifier.add'; caller: Caller; pattern: string; urlTemplate: string }
  | { type: 'linkifier.update'; caller: Caller; id: number; pattern: string; urlTemplate: string }
  | { type: 'linkifier.remove'; caller: Caller; id: number }
  | { type: 'linkifier.reorder'; caller: Caller; order: number[] };
