import { scheduledByTime } from '../../user/views.ts';
import type { Builder } from '../builder.ts';

/** fetch type `scheduled_messages`: the user's undelivered scheduled messages, failed ones included, soonest first. */
export const scheduledMessagesState: Builder = ({ personal }) => ({ scheduled_messages: scheduledByTime(personal) });
