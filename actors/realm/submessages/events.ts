import type { Delivery } from '../../events.ts';
import type { WireEventOf } from '../../wire/events.ts';
import type { RealmState } from '../state.ts';
import type { SubmessageChange } from './changes.ts';

/** The `submessage` event, to every user holding the message, as the original sends it (its UserMessage rows). */
export function submessageEvents(state: RealmState, change: SubmessageChange): Delivery[] {
  const { submessage } = change;
  const message = state.messages.byId.get(submessage.messageId);
  if (!message || message.userIds.length === 0) return [];
  return [{
    realmId: state.realmId,
    audience: { kind: 'users', userIds: [...message.userIds] },
    event: {
      type: 'submessage', msg_type: submessage.msgType, message_id: submessage.messageId,
      submessage_id: submessage.id, sender_id: submessage.senderId, content: submessage.content,
    } satisfies WireEventOf<'submessage'>,
  }];
}
