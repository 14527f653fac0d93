import { z } from 'zod';
import { badRequest } from '../../actors/errors.ts';
import { channelTyping, directTyping, editTyping, type Typist, type TypingOp } from '../../actors/typing/typing.ts';
import { settingValue } from '../../actors/user/settings.ts';
import { p } from '../http/params.ts';
import { route, type RouteContext } from './route.ts';
import type { WireResponse } from '../../actors/wire/responses.ts';

/** `op` and `type` are checked by hand to answer with the original's messages ("Invalid op"). */
function oneOf<T extends string>(name: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value)) throw badRequest(`Invalid ${name}`);
  return value as T;
}

const OPS = ['start', 'stop'] as const;

function typist({ services, realm, user }: RouteContext<'user'>): Typist {
  const { runtime } = services;
  return { realm, sender: user, setting: (userId, name) => settingValue(runtime.userState(realm.realmId, userId).settings, name) === true };
}

/** Typing notifications: checked, then published to the queues straight away; nothing is stored. */
export const typingRoutes = [
  route({
    method: 'POST',
    path: '/typing',
    auth: 'user',
    params: {
      // `private` is the spelling before feature level 174; still accepted, as `direct`.
      type: p.string().default('direct'),
      op: p.string(),
      to: p.json(z.array(z.number().int())).optional(),
      stream_id: p.int().optional(),
      topic: p.string().optional(),
    },
    handle(context, params) {
      const kind = oneOf('type', params.type, ['direct', 'private', 'stream', 'channel']);
      const op = oneOf<TypingOp>('op', params.op, OPS);
      const deliveries = kind === 'stream' || kind === 'channel'
        ? channelTyping(typist(context), op, params.stream_id, params.topic)
        : directTyping(typist(context), op, params.to);
      context.services.runtime.publish(deliveries);
      return {} satisfies WireResponse<'/typing', 'post'>;
    },
  }),

  route({
    method: 'POST',
    path: '/messages/{message_id}/typing',
    auth: 'user',
    params: { message_id: p.int(z.number().int()), op: p.string() },
    handle(context, params) {
      const op = oneOf<TypingOp>('op', params.op, OPS);
      context.services.runtime.publish(editTyping(typist(context), op, params.message_id));
      return {} satisfies WireResponse<'/messages/{message_id}/typing', 'post'>;
    },
  }),
];
