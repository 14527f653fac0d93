import { p } from '../http/params.ts';
import { route } from './route.ts';

/** Widgets' submessages (a vote, a new task). The original's path is singular; the document does not list it. */
export const submessageRoutes = [
  route({
    method: 'POST',
    path: '/submessage',
    auth: 'user',
    params: { message_id: p.int(), msg_type: p.string(), content: p.string() },
    async handle({ services, realm, user }, params) {
      await services.runtime.execute(realm.realmId, {
        type: 'submessage.add',
        caller: { kind: 'user', userId: user.userId },
        messageId: params.message_id,
        msgType: params.msg_type,
        content: params.content,
        maxPerMessage: services.config.maxSubmessagesPerMessage,
      });
      return {};
    },
  }),
];
