import { remindersByTime, scheduledByTime } from '../../user/views.ts';
import type { WireRegisterKeys } from '../../wire/events.ts';
import type { Builder } from '../builder.ts';

/** fetch type `scheduled_messages`: the user's undelivered scheduled messages, failed ones included, soonest first. */
export const scheduledMessagesState: Builder = ({ personal }) => ({ scheduled_messages: scheduledByTime(personal) }) satisfies WireRegisterKeys<'scheduled_messages'>;

/** fetch type `reminders`: the user's undelivered reminders, failed ones included, soonest first. */
export const remindersState: Builder = ({ personal }) => ({ reminders: remindersByTime(personal) }) satisfies WireRegisterKeys<'reminders'>;
