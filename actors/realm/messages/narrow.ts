import { ChatError, ErrorCode } from '../../errors.ts';
import type { RealmState } from '../state.ts';
import { findAccessibleUser } from '../user-access.ts';
import { canRead, holds, readsChannelHistory } from './access.ts';
import { RESOLVED_TOPIC_PREFIX } from './limits.ts';
import { isImageName } from '../attachments/state.ts';
import { HAS_IMAGE, HAS_LINK } from './bodies.ts';
import { parseSearch } from './search-query.ts';
import { conversationKey, type StoredMessage, topicKey } from './state.ts';

/** One narrow term as the client sent it (object form, or the legacy [operator, operand] pair). */
export interface NarrowTerm {
  operator: string;
  operand: string | number | number[];
  negated?: boolean;
}

/** A term resolved against the realm: names and emails turned into ids, aliases into one spelling. */
export type Clause = { negated: boolean } & (
  | { kind: 'channel'; channelId: number }
  | { kind: 'public-channels' }
  | { kind: 'topic'; topic: string }
  | { kind: 'dm'; key: string }
  | { kind: 'dm-including'; userId: number }
  | { kind: 'sender'; userId: number }
  | { kind: 'is'; what: 'dm' | 'starred' | 'mentioned' | 'unread' | 'resolved' | 'followed' | 'alerted'; followed?: ReadonlySet<string> }
  | { kind: 'has'; what: 'link' | 'image' | 'attachment' | 'reaction' }
  | { kind: 'id'; id: number }
  | { kind: 'search'; words: string[]; query: string }
  | { kind: 'none' }
);

const ALIASES: Record<string, string> = {
  stream: 'channel', streams: 'channels', subject: 'topic', 'pm-with': 'dm', 'group-pm-with': 'dm-including',
};
const IS_OPERANDS: Record<string, Extract<Clause, { kind: 'is' }>['what']> = {
  dm: 'dm', private: 'dm', starred: 'starred', mentioned: 'mentioned', unread: 'unread', resolved: 'resolved',
  followed: 'followed', alerted: 'alerted',
};
const HAS_OPERANDS = ['link', 'image', 'attachment', 'reaction'] as const;

export const badNarrow = (desc: string) => new ChatError(ErrorCode.BAD_NARROW, `Invalid narrow operator: ${desc}`, 400, { desc });

/** Resolves a narrow for a user; a private channel the user cannot read answers like an unknown one. */
/**
 * `followedTopics`: the user's followed topics (keys as `topicKey`), which its own actor keeps; `is:followed`
 * reads them.
 */
export function resolveNarrow(state: RealmState, userId: number, terms: readonly NarrowTerm[], followedTopics?: ReadonlySet<string>): Clause[] {
  return terms.flatMap((term) => resolveTerm(state, userId, term, followedTopics));
}

function resolveTerm(state: RealmState, userId: number, term: NarrowTerm, followedTopics?: ReadonlySet<string>): Clause[] {
  const operator = ALIASES[term.operator] ?? term.operator;
  const negated = term.negated ?? false;
  const operand = term.operand;
  const text = String(operand).trim();
  switch (operator) {
    case 'channel': {
      const id = typeof operand === 'number' || /^\d+$/.test(text) ? Number(text) : state.channelIdByName.get(text.toLowerCase());
      const channel = id === undefined ? undefined : state.channels.get(id);
      const member = channel && state.subscriptions.get(channel.id)?.has(userId);
      if (!channel || !(member || readsChannelHistory(state, channel, userId))) throw badNarrow(`unknown channel ${text}`);
      return [{ kind: 'channel', channelId: channel.id, negated }];
    }
    case 'channels':
      if (text === 'public') return [{ kind: 'public-channels', negated }];
      if (text === 'web-public') return [{ kind: 'none', negated }];
      throw badNarrow(`unknown channels operand ${text}`);
    case 'topic':
      return [{ kind: 'topic', topic: text.toLowerCase(), negated }];
    case 'dm': {
      const ids = userList(state, userId, operand);
      return [{ kind: 'dm', key: conversationKey([...new Set([...ids, userId])]), negated }];
    }
    case 'dm-including':
      return [{ kind: 'dm-including', userId: oneUser(state, userId, operand), negated }];
    case 'sender':
      return [{ kind: 'sender', userId: text === 'me' ? userId : oneUser(state, userId, operand), negated }];
    case 'is': {
      const what = IS_OPERANDS[text];
      if (!what) throw badNarrow(`unknown 'is' operand ${text}`);
      return [what === 'followed' ? { kind: 'is', what, negated, followed: followedTopics ?? new Set() } : { kind: 'is', what, negated }];
    }
    case 'has': {
      const what = HAS_OPERANDS.find((candidate) => candidate === text);
      if (!what) throw badNarrow(`unknown 'has' operand ${text}`);
      return [{ kind: 'has', what, negated }];
    }
    case 'id':
      if (!/^\d+$/.test(text)) throw badNarrow(`invalid message ID ${text}`);
      return [{ kind: 'id', id: Number(text), negated }];
    case 'with':
      return withClauses(state, userId, text);
    case 'near':
      // Only moves the client's view; it filters nothing.
      return [];
    case 'search': {
      const { words, query } = parseSearch(text);
      return query ? [{ kind: 'search', words, query, negated }] : [];
    }
    default:
      throw badNarrow(`unknown operator ${term.operator}`);
  }
}

/** `with:ID`: the conversation the message is in now (it may have moved since a link was made). */
function withClauses(state: RealmState, userId: number, text: string): Clause[] {
  const message = /^\d+$/.test(text) ? state.messages.byId.get(Number(text)) : undefined;
  if (!message || !canRead(state, userId, message)) throw badNarrow(`invalid 'with' operand ${text}`);
  const { recipient } = message;
  if (recipient.kind === 'direct') return [{ kind: 'dm', key: conversationKey(recipient.userIds), negated: false }];
  return [
    { kind: 'channel', channelId: recipient.channelId, negated: false },
    { kind: 'topic', topic: recipient.topic.toLowerCase(), negated: false },
  ];
}

function userList(state: RealmState, viewerId: number, operand: NarrowTerm['operand']): number[] {
  const entries = Array.isArray(operand) ? operand : typeof operand === 'number' ? [operand] : operand.split(',').map((part) => part.trim());
  return entries.map((entry) => oneUser(state, viewerId, entry));
}

/** A user the viewer may access (one it may not answers like an unknown one). */
function oneUser(state: RealmState, viewerId: number, operand: NarrowTerm['operand']): number {
  const text = String(operand).trim();
  const user = findAccessibleUser(state, viewerId, text);
  if (!user) throw badNarrow(`unknown user ${text}`);
  return user.userId;
}

/**
 * Does the message match every clause, for this user (who must be able to read it)? Search clauses are
 * the full-text index's to answer (search.ts): this checks every other clause.
 */
export function matches(state: RealmState, userId: number, message: StoredMessage, clauses: readonly Clause[]): boolean {
  if (!canRead(state, userId, message)) return false;
  for (const clause of clauses) {
    if (clause.kind === 'search') continue;
    if (test(state, userId, message, clause) === clause.negated) return false;
  }
  return true;
}

/** `matches` by message id: false for an id that names no message (deleted meanwhile, or never sent). */
export function idMatcher(state: RealmState, userId: number, clauses: readonly Clause[]): (id: number) => boolean {
  return (id) => {
    const message = state.messages.byId.get(id);
    return !!message && matches(state, userId, message, clauses);
  };
}

/** Is the message in the user's set of a flag? Apart from `test`: a closure made per test was most of what a topic's narrow allocated. */
const flagged = (set: Map<number, { has(id: number): boolean }>, userId: number, message: StoredMessage) => set.get(userId)?.has(message.id) ?? false;

function test(state: RealmState, userId: number, message: StoredMessage, clause: Exclude<Clause, { kind: 'search' }>): boolean {
  const { recipient } = message;
  switch (clause.kind) {
    case 'channel':
      return recipient.kind === 'channel' && recipient.channelId === clause.channelId;
    case 'public-channels':
      return recipient.kind === 'channel' && state.channels.get(recipient.channelId)?.inviteOnly === false;
    case 'topic':
      return recipient.kind === 'channel' && recipient.topic.toLowerCase() === clause.topic;
    case 'dm':
      return recipient.kind === 'direct' && conversationKey(recipient.userIds) === clause.key;
    case 'dm-including':
      return recipient.kind === 'direct' && recipient.userIds.includes(clause.userId);
    case 'sender':
      return message.senderId === clause.userId;
    case 'id':
      return message.id === clause.id;
    case 'none':
      return false;
    case 'has':
      if (clause.what === 'reaction') return message.reactions.length > 0;
      if (clause.what === 'attachment') return (message.attachmentIds?.length ?? 0) > 0;
      if (clause.what === 'link') return (message.contentHas & HAS_LINK) !== 0;
      return hasImage(state, message);
    case 'is':
      switch (clause.what) {
        case 'dm':
          return recipient.kind === 'direct';
        case 'starred':
          return flagged(state.messages.flags.starred, userId, message);
        case 'unread':
          return flagged(state.messages.flags.unread, userId, message);
        case 'mentioned':
          return holds(message, userId) && flagged(state.messages.mentionedOf, userId, message);
        case 'resolved':
          return recipient.kind === 'channel' && recipient.topic.startsWith(RESOLVED_TOPIC_PREFIX);
        case 'alerted':
          return holds(message, userId) && (message.alertedUserIds?.includes(userId) ?? false);
        case 'followed':
          return recipient.kind === 'channel' && (clause.followed?.has(topicKey(recipient.channelId, recipient.topic)) ?? false);
      }
  }
}

/** The words a search narrow looks for, for highlighting. */
export const searchWords = (clauses: readonly Clause[]) =>
  clauses.flatMap((clause) => (clause.kind === 'search' && !clause.negated ? clause.words : []));

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Wraps the searched words in highlight spans, in the text of the HTML only (never inside a tag). */
export function highlight(html: string, words: readonly string[]): string {
  if (words.length === 0) return html;
  const pattern = new RegExp(words.map((word) => escapeHtml(word).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'gi');
  return html.split(/(<[^>]*>)/).map((part) => (part.startsWith('<') ? part : part.replace(pattern, (found) => `<span class="highlight">${found}</span>`))).join('');
}

export const highlightTopic = (topic: string, words: readonly string[]) => highlight(escapeHtml(topic), words);

/** `has:image`: an inline image, an uploaded image file the message links, or a link to an image. */
function hasImage(state: RealmState, message: StoredMessage): boolean {
  if ((message.contentHas & HAS_IMAGE) !== 0) return true;
  for (const id of message.attachmentIds ?? []) {
    const attachment = state.attachments.byId.get(id);
    if (attachment && isImageName(attachment.name)) return true;
  }
  return false;
}
