import { badRequest } from '../../errors.ts';
import { LIMITS } from '../../register/realm-limits.ts';
import { callerUser, readableMessage } from '../messages/decide.ts';
import type { RealmState } from '../state.ts';
import type { SubmessageChange } from './changes.ts';
import type { SubmessageCommand } from './commands.ts';
import { validateWidgetData, widgetType } from './widget.ts';

/**
 * All of one message's submessages together, in characters: every fetch of the message carries them. A vote
 * is about 45 characters, so the most submessages a message may have (CHAT_MAX_SUBMESSAGES_PER_MESSAGE,
 * 20,000) of votes fit; 20,000 of the longest (10,000 characters) would make each fetch 200 MB.
 */
export const MAX_SUBMESSAGE_CHARS_PER_MESSAGE = 2_000_000;

/**
 * A submessage, as the original's `process_submessage`: on a message the user may read; the first on a
 * message is its sender's (the widget it makes); a poll's or a todo list's data must have that widget's shape.
 * The original has no bound on a submessage's size; here it is a message's (each one is replayed by clients).
 */
export function decideSubmessage(state: RealmState, command: SubmessageCommand): SubmessageChange[] {
  const user = callerUser(state, command.caller);
  const message = readableMessage(state, user.userId, command.messageId);
  const existing = state.submessages.byMessage.get(message.id) ?? [];
  if (message.senderId !== user.userId && !existing.some((submessage) => submessage.senderId === message.senderId)) {
    throw badRequest('You cannot attach a submessage to this message.');
  }
  // Every view of the message carries them all, and they stay in memory: a poll cannot grow without end.
  if (existing.length >= command.maxPerMessage) throw badRequest(`This message already has ${command.maxPerMessage} submessages, the most it may have`);
  if (command.content.length > LIMITS.max_message_length) throw badRequest(`Submessage content is longer than ${LIMITS.max_message_length} characters`);
  let total = command.content.length;
  for (const submessage of existing) total += submessage.content.length;
  if (total > MAX_SUBMESSAGE_CHARS_PER_MESSAGE) {
    throw badRequest(`This message's submessages already hold ${total - command.content.length} characters; at most ${MAX_SUBMESSAGE_CHARS_PER_MESSAGE} fit`);
  }
  let data: unknown;
  try {
    data = JSON.parse(command.content);
  } catch {
    throw badRequest('Invalid json for submessage');
  }
  const widget = widgetType(state.submessages, message.id);
  if (widget) validateWidgetData(widget, data, message.senderId === user.userId);
  return [{
    type: 'submessage.added',
    submessage: { id: state.submessages.nextId, messageId: message.id, senderId: user.userId, msgType: command.msgType, content: command.content },
  }];
}
