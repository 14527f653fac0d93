import { badRequest } from '../../errors.ts';
import { EMPTY_TOPIC_DISPLAY_NAME } from '../../register/realm-limits.ts';
import { TOPICS_REQUIRED } from '../messages/limits.ts';
import { topicNewest } from '../messages/newest-ids.ts';
import { topicKey } from '../messages/state.ts';
import { allowed } from '../permissions.ts';
import type { RealmState } from '../state.ts';
import type { Channel, ChannelTopicsPolicy } from './state.ts';

/** A channel's own topics policy may be set by the realm's `can_set_topics_policy_group`; `inherit` by anyone who edits the channel. */
export function checkTopicsPolicy(state: RealmState, actor: number | null, policy: ChannelTopicsPolicy, channel?: Channel): void {
  if (policy !== 'inherit' && actor !== null && !allowed(state, 'can_set_topics_policy_group', actor)) throw badRequest('Insufficient permission');
  if (policy === 'empty_topic_only' && channel && hasNamedTopics(state, channel.id)) {
    throw badRequest(`To enable this configuration, all messages in this channel must be in the ${EMPTY_TOPIC_DISPLAY_NAME} topic. Consider renaming or deleting other topics.`);
  }
}

function hasNamedTopics(state: RealmState, channelId: number): boolean {
  // The key of the empty topic is the channel's prefix alone.
  const emptyTopic = topicKey(channelId, '');
  for (const key of topicNewest(state.messages.byTopic).of(channelId).keys()) if (key !== emptyTopic) return true;
  return false;
}

/** Refuses a message to a topic the channel's policy (or, inheriting, the realm's) does not allow. */
export function checkTopicAllowed(state: RealmState, channel: Channel, topic: string): void {
  const policy = channel.topicsPolicy ?? 'inherit';
  if (topic !== '' && policy === 'empty_topic_only') throw badRequest(`Only the ${EMPTY_TOPIC_DISPLAY_NAME} topic is allowed in this channel.`);
  if (topic !== '') return;
  if (policy === 'disable_empty_topic') throw badRequest(`Sending messages to the ${EMPTY_TOPIC_DISPLAY_NAME} topic is not allowed in this channel.`);
  if (policy === 'inherit' && state.settings.topics_policy === 'disable_empty_topic') throw badRequest(TOPICS_REQUIRED);
}
