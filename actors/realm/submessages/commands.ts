import type { Caller } from '../commands.ts';

/** POST /submessage: a widget's event (a vote, a new option, a task struck out) attached to its message. */
export type SubmessageCommand = {
  type: 'submessage.add';
  caller: Caller;
  messageId: number;
  msgType: string;
  content: string;
  /** how many one message may hold (its widget and every event after it) */
  maxPerMessage: number;
};
