import { z } from 'zod';
import { badRequest, ChatError, ErrorCode } from '../../actors/errors.ts';
import { policyTopicName } from '../../actors/user/decide-topics.ts';
import { VisibilityPolicy } from '../../actors/user/state.ts';
import { p } from '../http/params.ts';
import { route } from './route.ts';
import type { WireResponse } from '../../actors/wire/responses.ts';

const POLICIES: readonly number[] = Object.values(VisibilityPolicy);

export const userTopicRoutes = [
  route({
    method: 'POST',
    path: '/user_topics',
    auth: 'user',
    params: { stream_id: p.int(z.number().int()), topic: p.string(), visibility_policy: p.int(z.number().int()) },
    async handle({ services, realm, user }, { stream_id, topic, visibility_policy }) {
      // Parameters first, then access, as in the original.
      policyTopicName(topic);
      if (!POLICIES.includes(visibility_policy)) throw badRequest('Invalid visibility_policy');
      const policy = visibility_policy as VisibilityPolicy;
      await services.runtime.executeUser(realm.realmId, user.userId, { type: 'user_topic.set', channel: stream_id, topic, policy, error: 'Invalid channel ID', realm });
      return {} satisfies WireResponse<'/user_topics', 'post'>;
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
    async handle({ services, realm, user }, { stream_id, stream, topic, op }) {
      policyTopicName(topic);
      if (op !== 'add' && op !== 'remove') throw badRequest('Invalid op');
      // The original's wording: a missing channel is reported as the more common parameter.
      if (stream_id === undefined && stream === undefined) throw badRequest("Missing 'stream_id' argument");
      if (stream_id !== undefined && stream !== undefined) {
        throw new ChatError(ErrorCode.BAD_REQUEST, 'Unsupported parameter combination: stream_id, stream', 400, { parameters: 'stream_id, stream' });
      }
      const removing = op === 'remove';
      const error = removing ? 'Topic is not muted' : stream === undefined ? 'Invalid channel ID' : `Invalid channel name '${stream}'`;
      await services.runtime.executeUser(realm.realmId, user.userId, {
        type: 'user_topic.set',
        channel: stream_id ?? { name: stream! },
        topic,
        policy: removing ? VisibilityPolicy.none : VisibilityPolicy.muted,
        error,
        realm,
      });
      return {} satisfies WireResponse<'/users/me/subscriptions/muted_topics', 'patch'>;
    },
  }),
];
