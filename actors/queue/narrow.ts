import { badRequest } from '../errors.ts';
import type { ApiEvent } from '../events.ts';
import { RESOLVED_TOPIC_PREFIX } from '../realm/messages/limits.ts';

/**
 * The `narrow` of POST /register: a filter on the message events a queue would get anyway (a recipient's
 * messages, or every public channel's with `all_public_streams`), not a search. It reads only the event's
 * message payload and flags, as the original's `narrow_predicate` does, so checking it costs a few string
 * comparisons per queue and needs no realm state. Every other event type passes untouched.
 */
export type MessageFilter = (event: Extract<ApiEvent, { type: 'message' }>) => boolean;

// What the original accepts in an event narrow; `stream` is the legacy spelling of `channel`.
const SUPPORTED_OPERATORS = new Set(['channel', 'stream', 'topic', 'exact-topic', 'sender', 'is']);
// `is:followed` needs personal topic state the event does not carry: the original refuses it too.
const UNSUPPORTED_IS_OPERANDS = new Set(['followed']);

/** Refuses what an event narrow cannot filter by, with the original's messages. */
export function checkEventNarrow(narrow: readonly (readonly [string, string])[]): void {
  for (const [operator, operand] of narrow) {
    if (!SUPPORTED_OPERATORS.has(operator)) throw badRequest(`Operator ${operator} not supported.`);
    if (operator === 'is' && UNSUPPORTED_IS_OPERANDS.has(operand)) throw badRequest(`Operand ${operand} not supported.`);
  }
}

interface MessagePayload {
  type?: string;
  display_recipient?: unknown;
  stream_id?: number;
  subject?: string;
  sender_email?: string;
  sender_id?: number;
}

type Term = (message: MessagePayload, flags: readonly string[]) => boolean;

const isChannel = (message: MessagePayload) => message.type === 'stream';
const topicOf = (message: MessagePayload) => message.subject ?? '';

/** One term as a test; terms the original ignores (unknown `is` operands) test nothing. */
function compileTerm(operator: string, operand: string): Term | null {
  const lower = operand.toLowerCase();
  switch (operator) {
    case 'channel':
    case 'stream':
      // By name, as the original; an all-digit operand may also name the channel by id.
      return (message) =>
        isChannel(message) &&
        ((typeof message.display_recipient === 'string' && message.display_recipient.toLowerCase() === lower) ||
          (/^\d+$/.test(operand) && message.stream_id === Number(operand)));
    case 'topic':
      // The original matches the whole topic or any one of its words, ignoring case.
      return (message) => {
        if (!isChannel(message)) return false;
        const topic = topicOf(message).toLowerCase();
        return topic === lower || topic.split(/\s+/).includes(lower);
      };
    case 'exact-topic':
      return (message) => isChannel(message) && topicOf(message) === operand;
    case 'sender':
      return (message) => message.sender_email?.toLowerCase() === lower || (/^\d+$/.test(operand) && message.sender_id === Number(operand));
    case 'is':
      switch (operand) {
        case 'dm':
        case 'private':
          return (message) => message.type === 'private';
        case 'starred':
          return (_message, flags) => flags.includes('starred');
        case 'unread':
          return (_message, flags) => !flags.includes('read');
        case 'mentioned':
          return (_message, flags) => flags.includes('mentioned');
        case 'alerted':
          return (_message, flags) => flags.includes('has_alert_word');
        case 'resolved':
          return (message) => isChannel(message) && topicOf(message).startsWith(RESOLVED_TOPIC_PREFIX);
        default:
          return null;
      }
    default:
      return null;
  }
}

/** Compiles a queue's narrow once (at registration or restore); null when it filters nothing. */
export function compileEventNarrow(narrow: readonly (readonly [string, string])[]): MessageFilter | null {
  const terms = narrow.map(([operator, operand]) => compileTerm(operator, operand)).filter((term): term is Term => term !== null);
  if (terms.length === 0) return null;
  return (event) => {
    const message: MessagePayload | undefined = event.message;
    if (!message) return false;
    return terms.every((term) => term(message, event.flags));
  };
}
