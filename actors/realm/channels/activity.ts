import { canRead, readsChannelHistory } from '../messages/access.ts';
import { topicNewest } from '../messages/newest-ids.ts';
import type { RealmState } from '../state.ts';

const DAY_SECONDS = 24 * 3600;
const WEEK_SECONDS = 7 * DAY_SECONDS;
/** The original averages a channel's traffic over its last four weeks. */
const TRAFFIC_WINDOW_SECONDS = 4 * WEEK_SECONDS;

/** A count of a channel's messages sent since a moment, good for every moment from `from` to `to` (UNIX seconds). */
interface KeptCount {
  from: number;
  to: number;
  count: number;
}

/**
 * How many of each channel's messages were sent since a moment, kept while the moment stays at or before the
 * oldest message counted and the channel's list is unchanged (as the newest ids are kept, newest-ids.ts).
 * Message ids grow with time, so a list counts from its newest segment back and searches the first older one
 * (IdList.newestRun), but it is read: a member of 5,000 channels each with messages, listing them, read every
 * list at every GET /users/me/subscriptions, turning the index's cache (4,096 keys) over, 37-139 ms
 * (2026-11-30).
 */
class RecentCounts {
  /** channel -> the count since a week ago, and since the traffic window's start */
  private readonly kept = new Map<number, { week?: KeptCount; window?: KeptCount }>();

  constructor(byChannel: RealmState['messages']['byChannel']) {
    byChannel.onTaken((keys) => {
      for (const key of keys) this.kept.delete(key);
    });
  }

  since(state: RealmState, channelId: number, since: number, span: 'week' | 'window'): number {
    const { byChannel, byId } = state.messages;
    const changed = byChannel.hasChanged(channelId);
    let counts = this.kept.get(channelId);
    const found = changed ? undefined : counts?.[span];
    if (found && found.from <= since && since <= found.to) return found.count;
    // The timestamp column, not the message: a registration asks this of every channel (no chunk is read).
    const run = byChannel.readOnce(channelId)?.newestRun((id) => (byId.timestampOf(id) ?? -Infinity) >= since);
    const count = run?.count ?? 0;
    if (!changed) {
      if (!counts) this.kept.set(channelId, (counts = {}));
      counts[span] = { from: since, to: run?.oldest === undefined ? Infinity : byId.timestampOf(run.oldest)!, count };
    }
    return count;
  }
}

const recentCounts = new WeakMap<RealmState['messages']['byChannel'], RecentCounts>();

/** How many of the channel's messages were sent since `since` (UNIX seconds), as of `span`'s kept count. */
function messagesSince(state: RealmState, channelId: number, since: number, span: 'week' | 'window'): number {
  const { byChannel } = state.messages;
  let counts = recentCounts.get(byChannel);
  if (!counts) recentCounts.set(byChannel, (counts = new RecentCounts(byChannel)));
  return counts.since(state, channelId, since, span);
}

/** `is_recently_active`: a message in the last week, or the channel itself is that new. */
export function isRecentlyActive(state: RealmState, channelId: number, createdAt: number, now: number): boolean {
  return now - createdAt < WEEK_SECONDS || messagesSince(state, channelId, now - WEEK_SECONDS, 'week') > 0;
}

/** `stream_weekly_traffic`: null while the channel is under a week old, else messages per week, rounded. */
export function weeklyTraffic(state: RealmState, channelId: number, createdAt: number, now: number): number | null {
  const age = now - createdAt;
  if (age < WEEK_SECONDS) return null;
  const window = Math.min(age, TRAFFIC_WINDOW_SECONDS);
  return Math.round((messagesSince(state, channelId, now - window, 'window') * WEEK_SECONDS) / window);
}

/** Resolves once channelTopics answers without reading every topic of the channel (TopicNewest.prepare). */
export const prepareChannelTopics = (state: RealmState, channelId: number): Promise<void> => topicNewest(state.messages.byTopic).prepare(channelId);

/**
 * The channel's topics with the newest message id the user may read in each, newest first (GET
 * /users/me/{stream_id}/topics). A user who reads the channel's whole history reads each topic's newest
 * message, which the topic summary keeps; another (a guest, a private channel's protected history) walks
 * each topic down to a message it holds.
 */
export function channelTopics(state: RealmState, channelId: number, userId: number): { name: string; max_id: number }[] {
  const { byTopic, byId } = state.messages;
  const channel = state.channels.get(channelId);
  const whole = !!channel && readsChannelHistory(state, channel, userId);
  const topics: { name: string; max_id: number }[] = [];
  for (const [key, newest] of topicNewest(byTopic).of(channelId)) {
    let id: number | undefined = newest;
    if (!whole) {
      id = undefined;
      for (const candidate of byTopic.readOnce(key)?.idsFrom(Infinity, true) ?? []) {
        const message = byId.get(candidate);
        if (message && canRead(state, userId, message)) {
          id = candidate;
          break;
        }
      }
    }
    const message = id === undefined ? undefined : byId.get(id);
    if (message?.recipient.kind === 'channel') topics.push({ name: message.recipient.topic, max_id: message.id });
  }
  return topics.sort((a, b) => b.max_id - a.max_id);
}
