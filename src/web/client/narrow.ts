/** What the feed shows: a channel (all its topics), one topic, or a direct conversation. */

export type Narrow =
  | { kind: 'channel'; streamId: number; topic?: string }
  /** the other participants, sorted; empty for the conversation with oneself */
  | { kind: 'dm'; userIds: number[] };

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
  if (narrow.kind === 'dm') return `dm:${narrow.userIds.join(',')}`;
  return narrow.topic === undefined ? `channel:${narrow.streamId}` : `topic:${narrow.streamId}:${narrow.topic.toLowerCase()}`;
}

export function sameNarrow(a: Narrow | null, b: Narrow | null): boolean {
  return a !== null && b !== null && narrowKey(a) === narrowKey(b);
}

/** The narrow in the API's terms for GET /messages. */
export function apiNarrow(narrow: Narrow, me: number): { operator: string; operand: unknown }[] {
  if (narrow.kind === 'dm') return [{ operator: 'dm', operand: narrow.userIds.length ? narrow.userIds : [me] }];
  const terms: { operator: string; operand: unknown }[] = [{ operator: 'channel', operand: narrow.streamId }];
  if (narrow.topic !== undefined) terms.push({ operator: 'topic', operand: narrow.topic });
  return terms;
}

export function matches(narrow: Narrow, message: Message, me: number): boolean {
  if (narrow.kind === 'dm') return message.type === 'private' && dmPeers(message, me).join(',') === narrow.userIds.join(',');
  if (message.type !== 'stream' || message.stream_id !== narrow.streamId) return false;
  return narrow.topic === undefined || sameTopic(narrow.topic, message.subject);
}

/** The narrow a message belongs to: its topic, or its conversation. */
export function narrowOf(message: Message, me: number): Narrow {
  return message.type === 'stream' ? { kind: 'channel', streamId: message.stream_id!, topic: message.subject } : { kind: 'dm', userIds: dmPeers(message, me) };
}

/** For the URL hash, so a reload comes back to the same place. */
export function narrowToHash(narrow: Narrow): string {
  if (narrow.kind === 'dm') return `#dm/${narrow.userIds.join(',')}`;
  return narrow.topic === undefined ? `#channel/${narrow.streamId}` : `#channel/${narrow.streamId}/${encodeURIComponent(narrow.topic)}`;
}

export function narrowFromHash(hash: string): Narrow | null {
  // The server's links in messages: /#narrow/channel/7-general[/topic/lunch]
  const link = /^#narrow\/(?:channel|stream)\/(\d+)(?:-[^/]*)?(?:\/topic\/([^/]*))?$/.exec(hash);
  if (link) return { kind: 'channel', streamId: Number(link[1]), ...(link[2] !== undefined ? { topic: safeDecode(link[2]) } : {}) };
  const channel = /^#channel\/(\d+)(?:\/(.*))?$/.exec(hash);
  if (channel) return { kind: 'channel', streamId: Number(channel[1]), ...(channel[2] !== undefined ? { topic: safeDecode(channel[2]) } : {}) };
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
