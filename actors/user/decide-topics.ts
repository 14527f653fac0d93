import { badRequest } from '../errors.ts';
import type { Clock } from '../realm/decide.ts';
import { EMPTY_TOPIC_DISPLAY_NAME, LIMITS } from '../register/realm-limits.ts';
import { channelKey, type Channel } from '../realm/channels/state.ts';
import { canSeeChannel } from '../realm/channels/views.ts';
import type { RealmState } from '../realm/state.ts';
import type { UserChange } from './changes.ts';
import type { UserCommand } from './commands.ts';
import { userTopicKey, VisibilityPolicy, type UserState } from './state.ts';
import { requireRoom } from './limits.ts';

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
export function decideUserTopic(state: UserState, command: Extract<UserCommand, { type: 'user_topic.set' }>, clock: Clock, maxPolicies: number): UserChange[] {
  const { topic, policy } = command;
  const topicName = policyTopicName(topic);
  const streamId = policyChannel(state, command.realm, command.channel, policy === VisibilityPolicy.none, command.error).id;
  const current = state.userTopics.get(userTopicKey(streamId, topicName));
  if ((current?.visibilityPolicy ?? VisibilityPolicy.none) === policy) return [];
  if (current === undefined) requireRoom('topics with a visibility policy', state.userTopics.size, 1, maxPolicies);
  return [{ type: 'user_topic.changed', streamId, topicName, policy, at: Math.floor(clock.now() / 1000) }];
}

/**
 * The channel a topic policy is set in: one the user can see. Removing a policy asks less: the channel
 * exists and the user has a policy there, so that a user who lost access can still clear what they set
 * (the original asks only that the channel exists; asking for a policy there keeps a private channel's
 * existence from showing).
 */
function policyChannel(state: UserState, realm: RealmState, named: number | { name: string }, removing: boolean, error: string): Channel {
  const id = typeof named === 'number' ? named : realm.channelIdByName.get(channelKey(named.name));
  const channel = id === undefined ? undefined : realm.channels.get(id);
  if (channel && canSeeChannel(realm, channel, state.userId)) return channel;
  if (channel && removing && hasPolicyInChannel(state, channel.id)) return channel;
  throw badRequest(error);
}

/** Has the user a policy for any topic of the channel? (Such a user may remove it after losing access.) */
function hasPolicyInChannel(state: UserState, streamId: number): boolean {
  for (const topic of state.userTopics.values()) if (topic.streamId === streamId) return true;
  return false;
}
