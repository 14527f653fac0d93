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

/** The channel's topics with their newest message id, newest first (GET /users/me/{stream_id}/topics). */
export function channelTopics(state: RealmState, channelId: number, canSee: (messageId: number) => boolean): { name: string; max_id: number }[] {
  const prefix = `${channelId}\u0000`;
  const topics: { name: string; max_id: number }[] = [];
  // Keys first: a topic's ids are read from the data directory only for this channel's topics.
  for (const key of [...state.messages.byTopic.keys()]) {
    if (!key.startsWith(prefix)) continue;
    const ids = state.messages.byTopic.get(key);
    if (!ids) continue;
    for (const id of ids.idsFrom(Infinity, true)) {
      if (!canSee(id)) continue;
      const message = state.messages.byId.get(id);
      if (message?.recipient.kind === 'channel') topics.push({ name: message.recipient.topic, max_id: id });
      break;
    }
  }
  return topics.sort((a, b) => b.max_id - a.max_id);
}

