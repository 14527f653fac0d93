import { badRequest } from '../errors.ts';

/**
 * How many of each kind of personal thing one user may keep. The original keeps them in PostgreSQL with no
 * limit; here a user's state is in memory and every registration of the user carries it whole, so each kind
 * is bounded well above what a person uses (a few saved snippets and drafts, a handful of alert words and
 * devices, topic policies in the hundreds). Only a new one is refused: removing or editing always works.
 */
export interface PersonalLimits {
  savedSnippets: number;
  /** drafts kept, whether or not registrations show them all (they show the newest 1,000) */
  drafts: number;
  /** scheduled messages, reminders apart (those have a bound of their own) */
  scheduledMessages: number;
  alertWords: number;
  /** topics with a visibility policy (muted, unmuted, followed), set in any channel the user can see */
  topicPolicies: number;
  /** legacy push notification device tokens (the E2EE devices have push-e2ee.ts's bound) */
  pushTokens: number;
}

export const DEFAULT_PERSONAL_LIMITS: PersonalLimits = {
  savedSnippets: 100,
  drafts: 1000,
  scheduledMessages: 1000,
  alertWords: 1000,
  topicPolicies: 10_000,
  pushTokens: 100,
};

/** Refuses `adding` more of a kind when the user keeps `count` of it and may keep `limit`. */
export function requireRoom(what: string, count: number, adding: number, limit: number): void {
  if (count + adding <= limit) return;
  const more = adding > 1 ? `; these ${adding} would make ${count + adding}` : '';
  throw badRequest(`You have ${count} ${what} and may keep at most ${limit}${more}`);
}
