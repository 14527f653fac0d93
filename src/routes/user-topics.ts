import { z } from 'zod';
import { badRequest, ChatError, ErrorCode } from '../../actors/errors.ts';
import { channelKey, type Channel } from '../../actors/realm/channels/state.ts';
import { canSeeChannel } from '../../actors/realm/channels/views.ts';
import type { RealmState, UserProfile } from '../../actors/realm/state.ts';
import { hasPolicyInChannel, policyTopicName } from '../../actors/user/decide-topics.ts';
import { VisibilityPolicy } from '../../actors/user/state.ts';
import type { AppServices } from '../services.ts';
import { p } from '../http/params.ts';
import { route } from './route.ts';

const POLICIES: readonly number[] = Object.values(VisibilityPolicy);

/**
 * The channel a topic policy is set in: one the user can see. Removing a policy asks less: the channel
 * exists and the user has a policy there, so that a user who lost access can still clear what they set
 * (the original asks only that the channel exists; asking for a policy there keeps a private channel's
 * existence from showing).
 */
function policyChannel(services: AppServices, realm: RealmState, user: UserProfile, channel: Channel | undefined, removing: boolean, error: string): Channel {
  if (channel && canSeeChannel(realm, channel, user.userId)) return channel;
  if (channel && removing && hasPolicyInChannel(services.runtime.userState(realm.realmId, user.userId), channel.id)) return channel;
  throw badRequest(error);
}

async function setPolicy(services: AppServices, realm: RealmState, user: UserProfile, channel: Channel, topic: string, policy: VisibilityPolicy) {
  await services.runtime.executeUser(realm.realmId, user.userId, { type: 'user_topic.set', streamId: channel.id, topic, policy });
  return {};
}

export const userTopicRoutes = [
  route({
    method: 'POST',
    path: '/user_topics',
    auth: 'user',
    params: { stream_id: p.int(z.number().int()), topic: p.string(), visibility_policy: p.int(z.number().int()) },
    handle({ services, realm, user }, { stream_id, topic, visibility_policy }) {
      // Parameters first, then access, as in the original.
      policyTopicName(topic);
      if (!POLICIES.includes(visibility_policy)) throw badRequest('Invalid visibility_policy');
      const policy = visibility_policy as VisibilityPolicy;
      const channel = policyChannel(services, realm, user, realm.channels.get(stream_id), policy === VisibilityPolicy.none, 'Invalid channel ID');
      return setPolicy(services, realm, user, channel, topic, policy);
    },
  }),

  // Deprecated since feature level 170 for POST /user_topics; `add` mutes, `remove` clears any policy.
  route({
    method: 'PATCH',
    path: '/users/me/subscriptions/muted_topics',
    auth: 'user',
    params: {
      stream_id: p.int(z.number().int()).optional(),
      stream: p.string().optional(),
      topic: p.string(),
      op: p.string(),
    },
    handle({ services, realm, user }, { stream_id, stream, topic, op }) {
      policyTopicName(topic);
      if (op !== 'add' && op !== 'remove') throw badRequest('Invalid op');
      // The original's wording: a missing channel is reported as the more common parameter.
      if (stream_id === undefined && stream === undefined) throw badRequest("Missing 'stream_id' argument");
      if (stream_id !== undefined && stream !== undefined) {
        throw new ChatError(ErrorCode.BAD_REQUEST, 'Unsupported parameter combination: stream_id, stream', 400, { parameters: 'stream_id, stream' });
      }
      const removing = op === 'remove';
      const byName = stream === undefined ? undefined : realm.channelIdByName.get(channelKey(stream));
      const channel = realm.channels.get(stream_id ?? byName ?? -1);
      const error = removing ? 'Topic is not muted' : stream === undefined ? 'Invalid channel ID' : `Invalid channel name '${stream}'`;
      const target = policyChannel(services, realm, user, channel, removing, error);
      return setPolicy(services, realm, user, target, topic, removing ? VisibilityPolicy.none : VisibilityPolicy.muted);
    },
  }),
];
