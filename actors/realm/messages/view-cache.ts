import type { RealmChange } from '../changes.ts';
import type { RealmState } from '../state.ts';
import { isHistoryChange, realmVersion } from '../version.ts';
import { SECOND_USE_SPAN, SecondUse } from './second-use.ts';
import type { JsonBytes } from '../../wire/json-bytes.ts';
import type { StoredMessage } from './state.ts';
import { writeMessageView } from './view-json.ts';
import type { ViewOptions } from './views.ts';

/**
 * One message's JSON texts, one per combination of view options, valid for one version of its realm: each
 * as its UTF-8 bytes (JsonBytes.bytesFrom), copied into an answer as they are.
 */
interface Entry {
  version: number;
  texts: (string | undefined)[];
}

/**
 * Messages' API objects (messageView, without the per-user `flags`) as JSON text, each left open (no closing
 * brace) so that a fetch appends its user's fields: serializing the 50 messages of a page was about a
 * quarter of a GET /messages. What a view reads besides its message (users, channels, settings, linkifiers)
 * moves the realm's version (version.ts), which every entry is checked against; the changes that alter a
 * message itself (edits and moves, reactions, deletions) drop its entry (forgetChangedViews). Bounded as
 * the bodies read back (CHAT_MESSAGE_BODY_CACHE): the most recently read stay. As a body, a view is kept from
 * its message's second read on (second-use.ts): one read once, as over a cold history, is not, and is
 * written straight into the answer (view-json.ts).
 */
class MessageViews {
  private readonly entries = new Map<number, Entry>();
  private readonly readOnce: SecondUse;

  constructor(private readonly limit: number) {
    this.readOnce = new SecondUse(SECOND_USE_SPAN * limit);
  }

  write(out: JsonBytes, state: RealmState, message: StoredMessage, options: ViewOptions): void {
    const version = realmVersion(state);
    const slot = (options.applyMarkdown ? 1 : 0) | (options.clientExtavatar ? 2 : 0) | (options.allowEmptyTopicName ? 4 : 0);
    let entry = this.entries.get(message.id);
    if (entry) {
      // Read again: it goes to the back of the eviction order.
      this.entries.delete(message.id);
      if (entry.version !== version) entry = { version, texts: [] };
    } else {
      if (!this.readOnce.again(message.id)) return writeMessageView(out, state, message, options);
      entry = { version, texts: [] };
      if (this.entries.size >= this.limit) this.entries.delete(this.entries.keys().next().value!);
    }
    this.entries.set(message.id, entry);
    const text = entry.texts[slot];
    if (text !== undefined) return out.bytes(text);
    const start = out.length;
    writeMessageView(out, state, message, options);
    entry.texts[slot] = out.bytesFrom(start);
  }

  forget(messageId: number): void {
    this.entries.delete(messageId);
  }

  get size(): number {
    return this.entries.size;
  }
}

/** Kept beside the state rather than in it, so snapshots do not store it (as version.ts). */
const views = new WeakMap<RealmState, MessageViews>();

/** Writes the message's view as JSON text without its closing brace (see MessageViews). */
export function writeOpenView(out: JsonBytes, state: RealmState, message: StoredMessage, options: ViewOptions): void {
  let cache = views.get(state);
  if (!cache) views.set(state, (cache = new MessageViews(state.messages.bodies.limit)));
  cache.write(out, state, message, options);
}

/** How many messages' views the realm keeps. */
export const cachedViews = (state: RealmState): number => views.get(state)?.size ?? 0;

/** Drops the views of the messages a history change altered; other changes move the realm's version. */
export function forgetChangedViews(state: RealmState, change: RealmChange): void {
  const cache = views.get(state);
  // What else a view reads moves the realm's version (version.ts), which each entry is checked against.
  if (!cache || !isHistoryChange(change)) return;
  switch (change.type) {
    case 'message.edited':
      for (const id of change.messageIds) cache.forget(id);
      return;
    case 'reaction.added':
    case 'reaction.removed':
      cache.forget(change.messageId);
      return;
    case 'submessage.added':
      cache.forget(change.submessage.messageId);
      return;
    case 'messages.deleted':
      for (const group of change.groups) for (const id of group.messageIds) cache.forget(id);
      return;
    // A new message has no view yet; flags are the reader's, added to the view at each fetch.
    case 'message.flags_changed':
    case 'message.sent':
      return;
    default: {
      const unknown: never = change;
      throw new Error(`unknown history change ${JSON.stringify(unknown)}`);
    }
  }
}
