import { badRequest } from '../errors.ts';
import type { Clock } from '../realm/decide.ts';
import { EMPTY_TOPIC_DISPLAY_NAME, LIMITS } from '../register/realm-limits.ts';
import type { UserChange } from './changes.ts';
import { userTopicKey, VisibilityPolicy, type UserState } from './state.ts';

/**
 * A topic name as the policies store it. The realm's display name for the empty topic is read as the empty
 * topic, since clients that never saw an empty topic name show (and send back) the display name.
 */
export function policyTopicName(topic: string): string {
  if (topic.length > LIMITS.max_topic_length) {
    throw badRequest(`topic is too long (limit: ${LIMITS.max_topic_length} characters)`);
  }
  if (topic.includes('\0')) throw badRequest('Topic must not contain null bytes');
  return topic === EMPTY_TOPIC_DISPLAY_NAME ? '' : topic;
}

/**
 * Sets a topic's visibility policy (0 removes it). Setting the policy a topic already has, or removing one it
 * does not have, changes nothing and announces nothing; that is also what makes the deprecated muted-topics
 * endpoint tolerant (feature level 169).
 */
export function decideUserTopic(state: UserState, streamId: number, topic: string, policy: VisibilityPolicy, clock: Clock): UserChange[] {
  const topicName = policyTopicName(topic);
  const current = state.userTopics.get(userTopicKey(streamId, topicName));
  if ((current?.visibilityPolicy ?? VisibilityPolicy.none) === policy) return [];
  return [{ type: 'user_topic.changed', streamId, topicName, policy, at: Math.floor(clock.now() / 1000) }];
}

/** Has the user a policy for any topic of the channel? (Such a user may remove it after losing access.) */
export function hasPolicyInChannel(state: UserState, streamId: number): boolean {
  for (const topic of state.userTopics.values()) if (topic.streamId === streamId) return true;
  return false;
}
