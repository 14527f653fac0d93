import type { JsonBytes } from '../../wire/json-bytes.ts';
import { decode } from '../../../snapshots/codec.ts';
import { displayEmail } from '../email-visibility.ts';
import { senderProfile } from '../notifications/state.ts';
import type { RealmState } from '../state.ts';
import { avatarUrl } from '../views.ts';
import { bodyFromRecord, CONTENT, recordTextEnd, recordTextStart, RENDERED_CONTENT, type BodyRecord } from './bodies.ts';
import type { MessageBody, StoredMessage } from './state.ts';
import { topicLinks } from './topic-links.ts';
import { historyView, topicForClient, visibleHistory, type ViewOptions } from './views.ts';

const COMMA = 0x2c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;

/**
 * A message's view (messageView) written as the bytes of its JSON text, without its closing brace (the
 * fetch appends its user's fields), without building the view or its text: the same bytes as
 * `JSON.stringify(messageView(...)).slice(0, -1)`, key for key. A body read from the data directory for this
 * read alone has its text copied from the stored record's bytes (MessageBodies.ofOrRecord) and is not
 * decoded. What a cold GET /messages allocated was mostly these views, their text and the bodies decoded for
 * them (bench/README.md, "Cold reads: the answer as bytes").
 */
export function writeMessageView(out: JsonBytes, state: RealmState, message: StoredMessage, options: ViewOptions): void {
  const sender = senderProfile(state, message.senderId)!;
  const { recipient } = message;
  out.raw('{"id":');
  out.number(message.id);
  out.raw(',"sender_id":');
  out.number(sender.userId);
  out.raw(',"content":');
  const body = writeContent(out, state, message, options.applyMarkdown);
  out.raw(',"recipient_id":');
  out.number(message.recipientId);
  out.raw(',"timestamp":');
  out.number(message.timestamp);
  out.raw(',"client":');
  out.string(message.client);
  out.raw(',"subject":');
  if (recipient.kind === 'channel') {
    out.string(topicForClient(recipient.topic, options.allowEmptyTopicName));
    out.raw(',"topic_links":[');
    const links = topicLinks(state, recipient.topic);
    for (let i = 0; i < links.length; i++) {
      if (i) out.char(COMMA);
      out.raw('{"text":');
      out.string(links[i]!.text);
      out.raw(',"url":');
      out.string(links[i]!.url);
      out.char(CLOSE_BRACE);
    }
    out.raw('],"is_me_message":');
  } else {
    out.raw('"","topic_links":[],"is_me_message":');
  }
  out.boolean(message.isMeMessage);
  out.raw(',"reactions":[');
  const { reactions } = message;
  for (let i = 0; i < reactions.length; i++) {
    const reaction = reactions[i]!;
    if (i) out.char(COMMA);
    out.raw('{"emoji_name":');
    out.string(reaction.emojiName);
    out.raw(',"emoji_code":');
    out.string(reaction.emojiCode);
    out.raw(',"reaction_type":');
    out.string(reaction.reactionType);
    out.raw(',"user_id":');
    out.number(reaction.userId);
    out.char(CLOSE_BRACE);
  }
  out.raw('],"submessages":[');
  const submessages = state.submessages.byMessage.get(message.id);
  if (submessages) {
    for (let i = 0; i < submessages.length; i++) {
      const submessage = submessages[i]!;
      if (i) out.char(COMMA);
      out.raw('{"msg_type":');
      out.string(submessage.msgType);
      out.raw(',"content":');
      out.string(submessage.content);
      out.raw(',"message_id":');
      out.number(submessage.messageId);
      out.raw(',"sender_id":');
      out.number(submessage.senderId);
      out.raw(',"id":');
      out.number(submessage.id);
      out.char(CLOSE_BRACE);
    }
  }
  out.raw('],"sender_full_name":');
  out.string(sender.fullName);
  out.raw(',"sender_email":');
  out.string(displayEmail(state, sender));
  out.raw(',"sender_realm_str":');
  out.string(state.stringId);
  out.raw(',"display_recipient":');
  if (recipient.kind === 'channel') out.string(state.channels.get(recipient.channelId)?.name ?? '');
  else writeDirectRecipients(out, state, recipient.userIds);
  out.raw(recipient.kind === 'channel' ? ',"type":"stream","avatar_url":' : ',"type":"private","avatar_url":');
  const avatar = avatarUrl(sender, options.clientExtavatar);
  if (avatar === null) out.raw('null');
  else out.string(avatar);
  out.raw(options.applyMarkdown ? ',"content_type":"text/html"' : ',"content_type":"text/x-markdown"');
  if (recipient.kind === 'channel') {
    out.raw(',"stream_id":');
    out.number(recipient.channelId);
  }
  if (body !== null && body.editHistory.length) {
    const history = visibleHistory(state, body);
    if (history.length) {
      out.raw(',"edit_history":');
      out.raw(JSON.stringify(history.map((entry) => historyView(entry, options.allowEmptyTopicName))));
    }
  }
  if (message.lastEditTimestamp !== undefined) {
    out.raw(',"last_edit_timestamp":');
    out.number(message.lastEditTimestamp);
  }
  if (message.lastMovedTimestamp !== undefined) {
    out.raw(',"last_moved_timestamp":');
    out.number(message.lastMovedTimestamp);
  }
}

/**
 * The content (its rendering, or its Markdown without `applyMarkdown`), copied from the stored record's bytes
 * when the body is read for this read alone and its text needs no escape; else from the body, which is
 * returned for the edit history (null: the record has none).
 */
function writeContent(out: JsonBytes, state: RealmState, message: StoredMessage, applyMarkdown: boolean): MessageBody | null {
  const found = state.messages.bodies.ofOrRecord(message);
  let body: MessageBody;
  if (found instanceof Uint8Array) {
    // The bytes are lmdb-js's shared read buffer: taken before anything else reads the data directory.
    const field = applyMarkdown ? RENDERED_CONTENT : CONTENT;
    const start = recordTextStart(found, field);
    if (start >= 0 && out.utf8String(found, start, recordTextEnd(found, field))) return null;
    body = bodyFromRecord(decode<BodyRecord>(found));
  } else {
    body = found;
  }
  out.string(applyMarkdown ? body.renderedContent : body.content);
  return body;
}

function writeDirectRecipients(out: JsonBytes, state: RealmState, userIds: readonly number[]): void {
  out.char(OPEN_BRACKET);
  for (let i = 0; i < userIds.length; i++) {
    const id = userIds[i]!;
    // The notification bot is among them in its reminders.
    const user = senderProfile(state, id);
    if (i) out.char(COMMA);
    out.raw('{"id":');
    out.number(id);
    out.raw(',"email":');
    out.string(user ? displayEmail(state, user) : '');
    out.raw(',"full_name":');
    out.string(user?.fullName ?? '');
    out.raw(',"is_mirror_dummy":false}');
  }
  out.char(CLOSE_BRACKET);
}
