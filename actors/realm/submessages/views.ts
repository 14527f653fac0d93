import type { WireSchema } from '../../wire/events.ts';
import type { SubmessageStore } from './state.ts';

/** A message's `submessages`, oldest first, as the API's objects. */
export const submessagesView = (store: SubmessageStore, messageId: number): WireSchema<'MessagesBase_submessages_inner'>[] =>
  (store.byMessage.get(messageId) ?? []).map((submessage) => ({
    msg_type: submessage.msgType,
    content: submessage.content,
    message_id: submessage.messageId,
    sender_id: submessage.senderId,
    id: submessage.id,
  }));
