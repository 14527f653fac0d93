import { badRequest, ChatError, ErrorCode } from '../errors.ts';
import { decideRealm, type Clock } from '../realm/decide.ts';
import type { RealmState } from '../realm/state.ts';
import type { UserChange } from './changes.ts';
import type { ScheduledEdit, ScheduledInput, ScheduledRequest, UserCommand } from './commands.ts';
import { countScheduled, type ScheduledMessage, type UserState } from './state.ts';
import { requireRoom } from './limits.ts';

type ScheduledCommand = Extract<UserCommand, { type: 'scheduled.create' | 'scheduled.edit' | 'scheduled.delete' | 'scheduled.fail' | 'reminder.create' | 'reminder.delete' }>;

/**
 * Scheduled messages: the id, the time, the failed state, and the recipients, topic and content checked
 * against the realm by a dry run of the send the timer service will make.
 */
export function decideScheduled(state: UserState, command: ScheduledCommand, clock: Clock, maxScheduled: number): UserChange[] {
  switch (command.type) {
    case 'scheduled.create': {
      const { message } = command;
      requireFuture(message.deliverAt, clock);
      requireRoom('scheduled messages', countScheduled(state.scheduled.values(), false), 1, maxScheduled);
      const checked = checkSend(command.realm, state.userId, message, clock);
      const input: ScheduledInput = { ...checked, deliverAt: message.deliverAt, readBySender: message.readBySender, client: message.client };
      return [{ type: 'scheduled.created', message: entry(state.nextScheduledId, input) }];
    }
    case 'scheduled.edit': {
      const existing = requireScheduled(state, command.id);
      const { edit } = command;
      requireEditable(existing, edit.deliverAt !== undefined);
      if (edit.deliverAt !== undefined) requireFuture(edit.deliverAt, clock);
      return [{ type: 'scheduled.edited', message: entry(command.id, edited(state, command.realm, existing, edit, clock)) }];
    }
    case 'scheduled.delete':
      requireScheduled(state, command.id);
      return [{ type: 'scheduled.deleted', id: command.id }];
    case 'reminder.create': {
      requireFuture(command.message.deliverAt, clock);
      if (countScheduled(state.scheduled.values(), true) >= command.maxReminders) throw badRequest(`You already have ${command.maxReminders} reminders, the most you may have`);
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

type Checked = Pick<ScheduledInput, 'type' | 'to' | 'topic' | 'content' | 'renderedContent'>;

/**
 * A dry run of the send the timer service will make: the realm's own checks now (channel, recipients,
 * posting permission, topic and content rules, mentions), and the recipients, topic and content as the send
 * normalizes them. Nothing is committed; the checks run again at delivery.
 */
function checkSend(realm: RealmState, senderId: number, message: Pick<ScheduledRequest, 'type' | 'to' | 'topic' | 'content'>, clock: Clock): Checked {
  const [change] = decideRealm(realm, {
    type: 'message.send',
    caller: { kind: 'user', userId: senderId },
    kind: message.type === 'stream' ? 'channel' : 'direct',
    to: message.type === 'stream' ? message.to[0]! : message.to,
    topic: message.topic,
    content: message.content,
    client: 'API',
  }, clock);
  if (change?.type !== 'message.sent') throw new Error('a send decided no message');
  const { recipient, content, renderedContent } = change.message;
  if (recipient.kind === 'channel') return { type: 'stream', to: [recipient.channelId], topic: recipient.topic, content, renderedContent };
  // As the original lists them: the other participants, or oneself for a note to self.
  const others = recipient.userIds.filter((id) => id !== senderId);
  return { type: 'private', to: others.length > 0 ? others : [senderId], topic: '', content, renderedContent };
}

/** The message after an edit: what changes is checked again with the rest, as a send now would check it (and as it was scheduled). */
function edited(state: UserState, realm: RealmState, existing: ScheduledMessage, edit: ScheduledEdit, clock: Clock): ScheduledInput {
  const { id: _id, failed: _failed, ...kept } = existing;
  const message: ScheduledInput = { ...kept, deliverAt: edit.deliverAt ?? existing.deliverAt };
  const kind = edit.type ?? existing.type;
  // A topic for a direct message (its type kept) is ignored, as in the original.
  const topicChanges = edit.topic !== undefined && kind === 'stream';
  if (edit.type === undefined && edit.to === undefined && edit.content === undefined && !topicChanges) return message;
  const checked = checkSend(realm, state.userId, {
    type: kind,
    to: edit.to ?? existing.to,
    topic: edit.topic ?? existing.topic,
    content: edit.content ?? existing.content,
  }, clock);
  Object.assign(message, { type: checked.type, to: checked.to, topic: checked.topic });
  if (edit.content !== undefined) Object.assign(message, { content: checked.content, renderedContent: checked.renderedContent });
  return message;
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
  if (input.client !== undefined) message.client = input.client;
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
