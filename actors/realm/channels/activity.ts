import { canRead, readsChannelHistory } from '../messages/access.ts';
import { topicNewest } from '../messages/newest-ids.ts';
import type { RealmState } from '../state.ts';

const DAY_SECONDS = 24 * 3600;
const WEEK_SECONDS = 7 * DAY_SECONDS;
/** The original averages a channel's traffic over its last four weeks. */
const TRAFFIC_WINDOW_SECONDS = 4 * WEEK_SECONDS;

/**
 * How many of the channel's messages were sent since `since` (UNIX seconds). Message ids grow with time, so
 * the channel's list counts from its newest segment back and searches the first older one, without a walk
 * (IdList.countNewest).
 */
export function messagesSince(state: RealmState, channelId: number, since: number): number {
  // The timestamp column, not the message: a registration asks this of every channel (no chunk is read).
  return state.messages.byChannel.get(channelId)?.countNewest((id) => (state.messages.byId.timestampOf(id) ?? -Infinity) >= since) ?? 0;
}

/** `is_recently_active`: a message in the last week, or the channel itself is that new. */
export function isRecentlyActive(state: RealmState, channelId: number, createdAt: number, now: number): boolean {
  return now - createdAt < WEEK_SECONDS || messagesSince(state, channelId, now - WEEK_SECONDS) > 0;
}

/** `stream_weekly_traffic`: null while the channel is under a week old, else messages per week, rounded. */
export function weeklyTraffic(state: RealmState, channelId: number, createdAt: number, now: number): number | null {
  const age = now - createdAt;
  if (age < WEEK_SECONDS) return null;
  const window = Math.min(age, TRAFFIC_WINDOW_SECONDS);
  return Math.round((messagesSince(state, channelId, now - window) * WEEK_SECONDS) / window);
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
