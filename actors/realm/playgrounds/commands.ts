import type { Caller } from '../commands.ts';

export type PlaygroundCommand =
  | { type: 'playground.add'; caller: Caller; name: string; pygmentsLanguage: string; urlTemplate: string }
  | { type: 'playground.remove'; caller: Caller; id: number };
