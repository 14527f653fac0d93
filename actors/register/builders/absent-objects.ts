import type { Builder } from '../builder.ts';

/*
 * Kinds of objects this server does not have yet: the registration lists none of them, which is what a
 * realm without any has. Each builder moves to its area when the objects arrive.
 */

/** fetch type `reminders`: the caller's pending message reminders. */
export const remindersState: Builder = () => ({ reminders: [] });
