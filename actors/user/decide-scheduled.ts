import { badRequest, ChatError, ErrorCode } from '../errors.ts';
import type { Clock } from '../realm/decide.ts';
import type { UserChange } from './changes.ts';
import type { ScheduledInput, UserCommand } from './commands.ts';
import type { ScheduledMessage, UserState } from './state.ts';

type ScheduledCommand = Extract<UserCommand, { type: 'scheduled.create' | 'scheduled.edit' | 'scheduled.delete' | 'scheduled.fail' | 'reminder.create' | 'reminder.delete' }>;

/**
 * Scheduled messages: the recipients and content were checked by the route against the realm (a dry run of
 * the send); here the id, the time and the failed state.
 */
export function decideScheduled(state: UserState, command: ScheduledCommand, clock: Clock): UserChange[] {
  switch (command.type) {
    case 'scheduled.create':
      requireFuture(command.message.deliverAt, clock);
      return [{ type: 'scheduled.created', message: entry(state.nextScheduledId, command.message) }];
    case 'scheduled.edit': {
      requireEditable(requireScheduled(state, command.id), command.deliverAtGiven);
      if (command.deliverAtGiven) requireFuture(command.message.deliverAt, clock);
      return [{ type: 'scheduled.edited', message: entry(command.id, command.message) }];
    }
    case 'scheduled.delete':
      requireScheduled(state, command.id);
      return [{ type: 'scheduled.deleted', id: command.id }];
    case 'reminder.create': {
      requireFuture(command.message.deliverAt, clock);
      const pending = [...state.scheduled.values()].filter((message) => message.reminderTargetMessageId !== undefined).length;
      if (pending >= command.maxReminders) throw badRequest(`You already have ${command.maxReminders} reminders, the most you may have`);
      return [{ type: 'scheduled.created', message: entry(state.nextScheduledId, command.message) }];
    }
    case 'reminder.delete': {
      const reminder = state.scheduled.get(command.id);
      if (reminder?.reminderTargetMessageId === undefined) throw new ChatError(ErrorCode.BAD_REQUEST, 'Reminder does not exist', 404);
      return [{ type: 'scheduled.deleted', id: command.id, reminder: true }];
    }
    case 'scheduled.fail': {
      const existing = state.scheduled.get(command.id);
      // Deleted or already marked meanwhile: nothing left to mark.
      if (!existing || existing.failed) return [];
      return [{ type: 'scheduled.failed', id: command.id, reason: command.reason }];
    }
  }
}

function entry(id: number, input: ScheduledInput): ScheduledMessage {
  const message: ScheduledMessage = {
    id,
    type: input.type,
    to: [...input.to],
    topic: input.type === 'stream' ? input.topic : '',
    content: input.content,
    renderedContent: input.renderedContent,
    deliverAt: input.deliverAt,
    failed: false,
  };
  if (input.readBySender !== undefined) message.readBySender = input.readBySender;
  if (input.reminderTargetMessageId !== undefined) message.reminderTargetMessageId = input.reminderTargetMessageId;
  return message;
}

/** Delivery is to the second: a time that is not after the current second has already come. */
export function requireFuture(deliverAt: number, clock: Clock): void {
  if (deliverAt * 1000 <= clock.now()) throw notInFuture();
}

const notInFuture = () => badRequest('Scheduled delivery time must be in the future.');

/** The old time has passed and the send failed: only a new time makes the message pending again. */
export function requireEditable(message: ScheduledMessage, deliverAtGiven: boolean): void {
  if (message.failed && !deliverAtGiven) throw notInFuture();
}

/** A scheduled message of the scheduled-message API: reminders are not among them. */
export function requireScheduled(state: UserState, id: number): ScheduledMessage {
  const message = state.scheduled.get(id);
  if (!message || message.reminderTargetMessageId !== undefined) throw new ChatError(ErrorCode.BAD_REQUEST, 'Scheduled message does not exist', 404);
  return message;
}
