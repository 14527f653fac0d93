import type { Playground } from './state.ts';

export type PlaygroundChange =
  | { type: 'playground.added'; playground: Playground }
  | { type: 'playground.removed'; id: number };
