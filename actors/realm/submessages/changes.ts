import type { Submessage } from './state.ts';

export type SubmessageChange = { type: 'submessage.added'; submessage: Submessage };
