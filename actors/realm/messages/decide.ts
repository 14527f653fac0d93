import { badRequest } from '../../errors.ts';
import type { Caller } from '../commands.ts';
import type { Clock, DecideContext } from '../decide.ts';
import type { RealmState, UserProfile } from '../state.ts';
import { canRead } from './access.ts';
import type { MessageChange } from './changes.ts';
import type { MessageCommand } from './commands.ts';
import { decideEdit } from './decide-edit.ts';
import { decideDelete, decideDeleteTopic, decideFlags, decideMarkRead, decideReaction } from './decide-misc.ts';
import { decideSend } from './decide-send.ts';
import type { StoredMessage } from './state.ts';

export function decideMessage(state: RealmState, command: MessageCommand, clock: DecideContext): MessageChange[] {
  switch (command.type) {
    case 'message.send':
      return decideSend(state, command, clock);
    case 'message.edit':
      return decideEdit(state, command, clock);
    case 'message.delete':
      return decideDelete(state, command);
    case 'topic.delete':
      return decideDeleteTopic(state, command);
    case 'reaction.add':
    case 'reaction.remove':
      return decideReaction(state, command);
    case 'message.flags':
      return decideFlags(state, command);
    case 'message.mark_read':
      return decideMarkRead(state, command);
  }
}

/** Messages are sent and changed by users only. */
export function callerUser(state: RealmState, caller: Caller): UserProfile {
  const user = caller.kind === 'user' ? state.users.get(caller.userId) : undefined;
  if (!user || !user.isActive) throw badRequest('Messages are sent by users');
  return user;
}

/** A message the user may read; any other id, existing or not, gets the same answer. */
export function readableMessage(state: RealmState, userId: number, messageId: number): StoredMessage {
  const message = state.messages.byId.get(messageId);
  if (!message || !canRead(state, userId, message)) throw badRequest('Invalid message(s)');
  return message;
}

export const nowSeconds = (clock: Clock) => Math.floor(clock.now() / 1000);
