/** Where one writes: a channel (all its topics), one topic, or a direct conversation. */
export type Conversation =
  | { kind: 'channel'; streamId: number; topic?: string }
  /** the other participants, sorted; empty for the conversation with oneself */
  | { kind: 'dm'; userIds: number[] };

/**
 * What the page shows: a conversation; messages from many (the results of a search in the server's narrow
 * syntax, one's starred messages); or a list of conversations (the inbox of unread ones, recent ones).
 */
export type Narrow = Conversation | { kind: 'search'; query: string } | { kind: 'starred' } | { kind: 'inbox' } | { kind: 'recent' };

/** Where one can write. */
export const isConversation = (narrow: Narrow | null): narrow is Conversation => narrow?.kind === 'channel' || narrow?.kind === 'dm';

/** Messages from many conversations, read rather than written to (and not marked read by being found). */
export const isListing = (narrow: Narrow | null): narrow is Extract<Narrow, { kind: 'search' | 'starred' }> => narrow?.kind === 'search' || narrow?.kind === 'starred';

/** Lists of conversations, not of messages. */
export const isOverview = (narrow: Narrow | null): narrow is Extract<Narrow, { kind: 'inbox' | 'recent' }> => narrow?.kind === 'inbox' || narrow?.kind === 'recent';

export interface Message {
  id: number;
  sender_id: number;
  sender_full_name: string;
  content: string;
  timestamp: number;
  type: 'stream' | 'private';
  stream_id?: number;
  subject: string;
  display_recipient: string | { id: number; full_name: string }[];
  reactions: Reaction[];
  flags: string[];
  last_edit_timestamp?: number;
}

export interface Reaction {
  emoji_name: string;
  emoji_code: string;
  reaction_type: string;
  user_id: number;
}

/** The participants of a direct message other than `me`, sorted. */
export function dmPeers(message: Message, me: number): number[] {
  if (!Array.isArray(message.display_recipient)) return [];
  return message.display_recipient.map((user) => user.id).filter((id) => id !== me).sort((a, b) => a - b);
}

/** Topics compare without case, as the server's do. */
export const sameTopic = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

export function narrowKey(narrow: Narrow): string {
  switch (narrow.kind) {
    case 'search': return `search:${narrow.query}`;
    case 'dm': return `dm:${narrow.userIds.join(',')}`;
    case 'channel': return narrow.topic === undefined ? `channel:${narrow.streamId}` : `topic:${narrow.streamId}:${narrow.topic.toLowerCase()}`;
    case 'starred': case 'inbox': case 'recent': return narrow.kind;
    default: return unreachable(narrow);
  }
}

function unreachable(value: never): never {
  throw new Error(`unexpected narrow ${JSON.stringify(value)}`);
}

export function sameNarrow(a: Narrow | null, b: Narrow | null): boolean {
  return a !== null && b !== null && narrowKey(a) === narrowKey(b);
}

/** The narrow in the API's terms for GET /messages. */
export function apiNarrow(narrow: Narrow, me: number): NarrowTerm[] {
  switch (narrow.kind) {
    case 'search': return parseSearch(narrow.query);
    case 'starred': return [{ operator: 'is', operand: 'starred' }];
    // The recent conversations are read from all one's messages.
    case 'inbox': case 'recent': return [];
    case 'dm': return [{ operator: 'dm', operand: narrow.userIds.length ? narrow.userIds : [me] }];
    case 'channel': return narrow.topic === undefined ? [{ operator: 'channel', operand: narrow.streamId }] : [{ operator: 'channel', operand: narrow.streamId }, { operator: 'topic', operand: narrow.topic }];
    default: return unreachable(narrow);
  }
}

export function matches(narrow: Narrow, message: Message, me: number): boolean {
  // Search results are what the server found when asked; new messages do not join them live (nor a list).
  if (narrow.kind === 'search' || narrow.kind === 'inbox' || narrow.kind === 'recent') return false;
  if (narrow.kind === 'starred') return message.flags.includes('starred');
  if (narrow.kind === 'dm') return message.type === 'private' && dmPeers(message, me).join(',') === narrow.userIds.join(',');
  if (message.type !== 'stream' || message.stream_id !== narrow.streamId) return false;
  return narrow.topic === undefined || sameTopic(narrow.topic, message.subject);
}

/** The narrow a message belongs to: its topic, or its conversation. */
export function narrowOf(message: Message, me: number): Conversation {
  return message.type === 'stream' ? { kind: 'channel', streamId: message.stream_id!, topic: message.subject } : { kind: 'dm', userIds: dmPeers(message, me) };
}

/** For the URL hash, so a reload comes back to the same place. */
export function narrowToHash(narrow: Narrow): string {
  switch (narrow.kind) {
    case 'search': return `#search/${encodeURIComponent(narrow.query)}`;
    case 'dm': return `#dm/${narrow.userIds.join(',')}`;
    case 'channel': return narrow.topic === undefined ? `#channel/${narrow.streamId}` : `#channel/${narrow.streamId}/${encodeURIComponent(narrow.topic)}`;
    case 'starred': case 'inbox': case 'recent': return `#${narrow.kind}`;
    default: return unreachable(narrow);
  }
}

/** A link to one message in its conversation, in the original's form (`#narrow/channel/7-general/topic/lunch/near/42`). */
export function messageLink(message: Message, me: number, channelName: string): string {
  if (message.type === 'stream') {
    return `#narrow/channel/${message.stream_id}-${encodeHashPart(channelName.replace(/ /g, '-'))}/topic/${encodeHashPart(message.subject)}/near/${message.id}`;
  }
  const everyone = [...new Set([...dmPeers(message, me), me])].sort((a, b) => a - b);
  return `#narrow/dm/${everyone.join(',')}-${everyone.length > 2 ? 'group' : 'dm'}/near/${message.id}`;
}

/** The original's hash encoding: percent-encoding with `.` for `%`, so that links survive being pasted. */
function encodeHashPart(text: string): string {
  return encodeURIComponent(text).replace(/[.()']/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).replace(/%/g, '.');
}

function decodeHashPart(text: string): string {
  return safeDecode(text.replace(/\./g, '%'));
}

/** A message link's narrow and the message it points at; null for any other hash. */
export function messageFromHash(hash: string, me: number): { narrow: Conversation; near: number } | null {
  const channel = /^#narrow\/(?:channel|stream)\/(\d+)(?:-[^/]*)?\/topic\/([^/]*)\/(?:near|with)\/(\d+)$/.exec(hash);
  if (channel) return { narrow: { kind: 'channel', streamId: Number(channel[1]), topic: decodeHashPart(channel[2]!) }, near: Number(channel[3]) };
  const dm = /^#narrow\/dm\/([\d,]+)(?:-[^/]*)?\/(?:near|with)\/(\d+)$/.exec(hash);
  if (dm) return { narrow: { kind: 'dm', userIds: dm[1]!.split(',').map(Number).filter((id) => id !== me).sort((a, b) => a - b) }, near: Number(dm[2]) };
  return null;
}

export function narrowFromHash(hash: string): Narrow | null {
  // The server's links in messages: /#narrow/channel/7-general[/topic/lunch]
  const link = /^#narrow\/(?:channel|stream)\/(\d+)(?:-[^/]*)?(?:\/topic\/([^/]*))?$/.exec(hash);
  if (link) return { kind: 'channel', streamId: Number(link[1]), ...(link[2] !== undefined ? { topic: decodeHashPart(link[2]) } : {}) };
  if (hash === '#starred' || hash === '#inbox' || hash === '#recent') return { kind: hash.slice(1) as 'starred' | 'inbox' | 'recent' };
  const channel = /^#channel\/(\d+)(?:\/(.*))?$/.exec(hash);
  if (channel) return { kind: 'channel', streamId: Number(channel[1]), ...(channel[2] !== undefined ? { topic: safeDecode(channel[2]) } : {}) };
  const search = /^#search\/(.+)$/.exec(hash);
  if (search) return { kind: 'search', query: safeDecode(search[1]!) };
  const dm = /^#dm\/([\d,]*)$/.exec(hash);
  if (dm) return { kind: 'dm', userIds: dm[1]!.split(',').filter(Boolean).map(Number).sort((a, b) => a - b) };
  return null;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

export interface NarrowTerm {
  operator: string;
  operand: unknown;
  negated?: boolean;
}

/** Operators a search box takes as `operator:operand` (`stream` is the server's alias of `channel`). */
const SEARCH_OPERATORS = new Set(['channel', 'stream', 'topic', 'sender', 'has', 'is', 'dm', 'dm-including', 'id', 'near', 'with', 'channels']);
/** Zulip's search box says `from:`; the API's operator is `sender`. */
const SEARCH_ALIASES: Record<string, string> = { from: 'sender' };

/**
 * A search box's text in the server's narrow syntax: `from:ada@example.com channel:general has:link lunch`,
 * with quotes for operands or phrases holding spaces (`topic:"team lunch"`) and a leading `-` to negate. The
 * words that are no operator are one full-text `search` term.
 */
export function parseSearch(query: string): NarrowTerm[] {
  const terms: NarrowTerm[] = [];
  const words: string[] = [];
  for (const match of query.matchAll(/(-?)([a-z-]+):(?:"([^"]*)"|(\S+))|"([^"]*)"|(\S+)/gi)) {
    const [, minus, operator, quoted, bare, phrase, word] = match;
    const name = operator && (SEARCH_ALIASES[operator.toLowerCase()] ?? operator.toLowerCase());
    if (name && SEARCH_OPERATORS.has(name)) {
      terms.push({ operator: name, operand: quoted ?? bare ?? '', ...(minus ? { negated: true } : {}) });
    } else {
      words.push(phrase !== undefined ? `"${phrase}"` : word ?? match[0]);
    }
  }
  if (words.length) terms.push({ operator: 'search', operand: words.join(' ') });
  return terms;
}
