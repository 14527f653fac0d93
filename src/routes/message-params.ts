import { topicKey } from '../../actors/realm/messages/state.ts';
import type { AppServices } from '../services.ts';
import { VisibilityPolicy } from '../../actors/user/state.ts';
import { z } from 'zod';
import { badRequest } from '../../actors/errors.ts';
import { flagsFor } from '../../actors/realm/messages/access.ts';
import { highlight, highlightTopic, resolveNarrow, type Clause, type NarrowTerm } from '../../actors/realm/messages/narrow.ts';
import { fetchWindow, firstUnread, LARGER_THAN_MAX_MESSAGE_ID, prepareLists, type WindowResult } from '../../actors/realm/messages/query.ts';
import { fetchSearchWindow, firstUnreadSearch, hasSearch } from '../../actors/realm/messages/search.ts';
import type { StoredMessage } from '../../actors/realm/messages/state.ts';
import { writeOpenView } from '../../actors/realm/messages/view-cache.ts';
import { topicForClient, type ViewOptions } from '../../actors/realm/messages/views.ts';
import type { RealmState } from '../../actors/realm/state.ts';
import { LineFull } from '../../actors/realm/messages/turns.ts';
import type { JsonBytes } from '../../actors/wire/json-bytes.ts';
import { p } from '../http/params.ts';
import { rateLimitHit } from '../http/rate-limit.ts';

const operand = z.union([z.string(), z.number().int(), z.array(z.number().int())]);
const term = z.union([
  z.object({ operator: z.string(), operand, negated: z.boolean().optional() }),
  z.tuple([z.string(), z.union([z.string(), z.number().int()])]),
]);

/** `narrow`: terms in the object form or the legacy [operator, operand] pairs. */
export const narrowParam = p.json(
  z.array(term).transform((terms): NarrowTerm[] => terms.map((t) => (Array.isArray(t) ? { operator: t[0], operand: t[1] } : t))),
);

export const messageIdsParam = p.json(z.array(z.number().int()));

/** The most messages one fetch may ask for, as in the original. */
export const MAX_MESSAGES_PER_FETCH = 5000;

/** `anchor`: a message id, or `newest`, `oldest`, `first_unread`. */
export const anchorParam = p.text(
  z.string().transform((text, context): number | 'newest' | 'oldest' | 'first_unread' => {
    const value = text.replace(/^"|"$/g, '').trim();
    if (value === 'newest' || value === 'oldest' || value === 'first_unread') return value;
    if (/^-?\d+$/.test(value) && Number.isSafeInteger(Number(value))) return Math.max(0, Number(value));
    context.addIssue({ code: 'custom', message: "must be a message ID, 'newest', 'oldest' or 'first_unread'" });
    return z.NEVER;
  }),
);

/** The numeric anchor a request means; `first_unread` walks the user's unread messages (in slices, see fetchWindow). */
function resolveAnchor(services: AppServices, realm: RealmState, userId: number, anchor: number | 'newest' | 'oldest' | 'first_unread', clauses: readonly Clause[]): number | Promise<number> {
  if (anchor === 'newest') return LARGER_THAN_MAX_MESSAGE_ID;
  if (anchor === 'oldest') return 0;
  if (anchor !== 'first_unread') return anchor;
  const first = hasSearch(clauses)
    ? firstUnreadSearch(services.runtime.searchIndex(), realm, userId, clauses, services.config.narrowSliceIds)
    : firstUnread(realm, userId, clauses, services.config.narrowSliceIds, services.config.narrowsQueuedPerUser);
  return first instanceof Promise ? first.then((id) => id ?? LARGER_THAN_MAX_MESSAGE_ID, refuseLineFull) : (first ?? LARGER_THAN_MAX_MESSAGE_ID);
}

/** A user with CHAT_NARROWS_QUEUED_PER_USER slow narrows in line already: the rate limiter's answer. */
function refuseLineFull(error: unknown): never {
  if (!(error instanceof LineFull)) throw error;
  throw rateLimitHit(`Too many slow narrows at once (at most ${error.limit} wait); try again shortly`, error.retryAfterSeconds, error.limit);
}

/**
 * The messages of a narrow around an anchor, for a fetch or a flag update. A narrow with search clauses is
 * answered from the full-text index, off the event loop; one without walks its candidate lists in slices,
 * serving other requests between them when the walk is long (a short one answers without waiting a turn).
 */
export async function narrowWindow(
  services: AppServices,
  realm: RealmState,
  userId: number,
  clauses: readonly Clause[],
  request: { anchor: number | 'newest' | 'oldest' | 'first_unread'; numBefore: number; numAfter: number; includeAnchor: boolean },
): Promise<WindowResult & { anchor: number }> {
  // A user in many direct conversations or channels: their newest ids read a slice a turn, not all in the walk's first.
  const ready = prepareLists(realm, userId, clauses);
  if (ready) await ready;
  const resolved = resolveAnchor(services, realm, userId, request.anchor, clauses);
  const anchor = typeof resolved === 'number' ? resolved : await resolved;
  if (hasSearch(clauses)) return { anchor, ...(await fetchSearchWindow(services.runtime.searchIndex(), realm, userId, clauses, { ...request, anchor }, services.config.narrowSliceIds)) };
  const window = fetchWindow(realm, userId, clauses, { ...request, anchor }, services.config.narrowSliceIds, services.config.narrowsQueuedPerUser);
  return { anchor, ...(window instanceof Promise ? await window.catch(refuseLineFull) : window) };
}

export function checkCounts(numBefore: number, numAfter: number): void {
  if (numBefore + numAfter > MAX_MESSAGES_PER_FETCH) throw badRequest(`Too many messages requested (maximum ${MAX_MESSAGES_PER_FETCH}).`);
}

/** A narrow resolved for its user, with the topics that user follows (kept by its own actor). */
export function narrowFor(services: AppServices, realm: RealmState, userId: number, terms: readonly NarrowTerm[]) {
  const followed = new Set<string>();
  for (const topic of services.runtime.userState(realm.realmId, userId).userTopics.values()) {
    if (topic.visibilityPolicy === VisibilityPolicy.followed) followed.add(topicKey(topic.streamId, topic.topicName));
  }
  return resolveNarrow(realm, userId, terms, followed);
}

/**
 * A message as a fetch returns it, written as JSON: the message's view (view-cache.ts), then the user's flags
 * and the search highlights. `words`: the narrow's searchWords.
 */
export function writeFetchedMessage(out: JsonBytes, realm: RealmState, userId: number, message: StoredMessage, options: ViewOptions, words: readonly string[]): void {
  writeOpenView(out, realm, message, options);
  out.raw(',"flags":[');
  const flags = flagsFor(realm, userId, message);
  for (let i = 0; i < flags.length; i++) {
    if (i) out.char(COMMA);
    out.string(flags[i]!);
  }
  out.char(CLOSE_BRACKET);
  if (words.length) out.raw(`,${JSON.stringify(searchMatch(realm, message, words, options.allowEmptyTopicName)).slice(1, -1)}`);
  out.char(CLOSE_BRACE);
}

/** A fetch's `"messages":[...]`: the messages of `ids` as writeFetchedMessage writes each. */
export function writeFetchedMessages(out: JsonBytes, realm: RealmState, userId: number, ids: readonly number[], options: ViewOptions, words: readonly string[]): void {
  out.raw('"messages":[');
  for (let i = 0; i < ids.length; i++) {
    if (i) out.char(COMMA);
    writeFetchedMessage(out, realm, userId, realm.messages.byId.get(ids[i]!)!, options, words);
  }
  out.char(CLOSE_BRACKET);
}

const COMMA = 0x2c;
const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;

export function searchMatch(realm: RealmState, message: StoredMessage, words: readonly string[], allowEmptyTopicName = true) {
  const topic = message.recipient.kind === 'channel' ? topicForClient(message.recipient.topic, allowEmptyTopicName) : '';
  return { match_content: highlight(realm.messages.bodies.of(message).renderedContent, words), match_subject: highlightTopic(topic, words) };
}
