import type { Linkifier } from './state.ts';

export type LinkifierChange =
  /** appended to the list */
  | { type: 'linkifier.added'; linkifier: Linkifier }
  /** pattern and template replaced, keeping its place */
  | { type: 'linkifier.updated'; linkifier: Linkifier }
  | { type: 'linkifier.removed'; id: number }
  /** every linkifier's id, in the new order */
  | { type: 'linkifiers.reordered'; order: number[] };
