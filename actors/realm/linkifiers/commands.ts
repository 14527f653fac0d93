import type { Caller } from '../commands.ts';

export type LinkifierCommand =
  | {
      type: 'linkifier.add';
      caller: Caller;
      pattern: string;
      urlTemplate: string;
      /** how many linkifiers one organization may have (the server's setting) */
      maxLinkifiers: number;
    }
  | { type: 'linkifier.update'; caller: Caller; id: number; pattern: string; urlTemplate: string }
  | { type: 'linkifier.remove'; caller: Caller; id: number }
  | { type: 'linkifier.reorder'; caller: Caller; order: number[] };
