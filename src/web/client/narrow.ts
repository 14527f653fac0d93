/** Where one writes: a channel (all its topics), one topic, or a direct conversation. */
export type Conversation =
  | { kind: 'channel'; streamId: number; topic?: string }
  /** the other participants, sorted; empty for the conversation with oneself */
  | { kind: 'dm'; userIds: number[] };

/** What the feed shows: a conversation, or the results of a search in the server's narrow syntax. */
export type Narrow = Conversation | { kind: 'search'; query: string };

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
  if (narrow.kind === 'search') return `search:${narrow.query}`;
  if (narrow.kind === 'dm') return `dm:${narrow.userIds.join(',')}`;
  return narrow.topic === undefined ? `channel:${narrow.streamId}` : `topic:${narrow.streamId}:${narrow.topic.toLowerCase()}`;
}

export function sameNarrow(a: Narrow | null, b: Narrow | null): boolean {
  return a !== null && b !== null && narrowKey(a) === narrowKey(b);
}

/** The narrow in the API's terms for GET /messages. */
export function apiNarrow(narrow: Narrow, me: number): NarrowTerm[] {
  if (narrow.kind === 'search') return parseSearch(narrow.query);
  if (narrow.kind === 'dm') return [{ operator: 'dm', operand: narrow.userIds.length ? narrow.userIds : [me] }];
  const terms: NarrowTerm[] = [{ operator: 'channel', operand: narrow.streamId }];
  if (narrow.topic !== undefined) terms.push({ operator: 'topic', operand: narrow.topic });
  return terms;
}

export function matches(narrow: Narrow, message: Message, me: number): boolean {
  // Search results are what the server found when asked; new messages do not join them live.
  if (narrow.kind === 'search') return false;
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
  if (narrow.kind === 'search') return `#search/${encodeURIComponent(narrow.query)}`;
  if (narrow.kind === 'dm') return `#dm/${narrow.userIds.join(',')}`;
  return narrow.topic === undefined ? `#channel/${narrow.streamId}` : `#channel/${narrow.streamId}/${encodeURIComponent(narrow.topic)}`;
}

export function narrowFromHash(hash: string): Narrow | null {
  // The server's links in messages: /#narrow/channel/7-general[/topic/lunch]
  const link = /^#narrow\/(?:channel|stream)\/(\d+)(?:-[^/]*)?(?:\/topic\/([^/]*))?$/.exec(hash);
  if (link) return { kind: 'channel', streamId: Number(link[1]), ...(link[2] !== undefined ? { topic: safeDecode(link[2]) } : {}) };
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
