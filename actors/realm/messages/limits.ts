import { badRequest } from '../../errors.ts';
import { EMPTY_TOPIC_DISPLAY_NAME, LIMITS } from '../../register/realm-limits.ts';

// The editing windows themselves are realm settings (realm/settings/state.ts), changed with PATCH /realm.

/**
 * A message keeps its newest this many edits (each content edit keeps the text and rendering before it,
 * up to about 60 KB). The original keeps every one; here a message's edit history is part of its body,
 * read whole and kept decoded among the recently read bodies, and a bot that edits a live status message
 * would otherwise grow it by every edit for ever. An older edit is dropped as a new one comes.
 */
export const MAX_EDIT_HISTORY = 100;

/** The original's grace period on the content edit window, for edits started just before it closed. */
export const EDIT_LIMIT_BUFFER_SECONDS = 20;

/** Sending or moving to the empty topic when the realm's topics policy disables it. */
export const TOPICS_REQUIRED = 'Topics are required in this organization';

/** Wildcard mentions are refused to users without `can_mention_many_users_group` above this many. */
export const WILDCARD_MENTION_THRESHOLD = 15;

/** Marks a resolved topic. */
export const RESOLVED_TOPIC_PREFIX = '✔ ';

/** The original's name for the empty topic before feature level 334, read as the empty topic since 370. */
const LEGACY_EMPTY_TOPIC = '(no topic)';

function truncate(text: string, max: number, marker: string): string {
  return text.length > max ? text.slice(0, max - marker.length) + marker : text;
}

/** Message content as the original stores it: trimmed at the end, never empty, cut to the length limit. */
export function normalizeContent(content: string): string {
  const body = content.trimEnd().replace(/^\n+/, '');
  if (body.length === 0) throw badRequest('Message must not be empty');
  if (body.includes('\u0000')) throw badRequest('Message must not contain null bytes');
  return truncate(body, LIMITS.max_message_length, '\n[message truncated]');
}

/** A topic as given by a client: trimmed, the empty topic's display names read as '', cut to the limit. */
export function normalizeTopic(topic: string): string {
  const trimmed = topic.trim();
  if (trimmed.includes('\u0000')) throw badRequest('Topic must not contain null bytes');
  if (trimmed === EMPTY_TOPIC_DISPLAY_NAME || trimmed === LEGACY_EMPTY_TOPIC) return '';
  return truncate(trimmed, LIMITS.max_topic_length, '...');
}
