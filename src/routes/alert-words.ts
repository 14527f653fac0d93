import { z } from 'zod';
import { p } from '../http/params.ts';
import { route } from './route.ts';
import type { WireResponse } from '../../actors/wire/responses.ts';

const words = p.json(z.array(z.string()));

/** Alert words: each answer carries the whole list after the change. */
export const alertWordRoutes = [
  route({
    method: 'GET',
    path: '/users/me/alert_words',
    auth: 'user',
    params: {},
    handle({ services, realm, user }) {
      return { alert_words: [...services.runtime.userState(realm.realmId, user.userId).alertWords] } satisfies WireResponse<'/users/me/alert_words', 'get'>;
    },
  }),

  route({
    method: 'POST',
    path: '/users/me/alert_words',
    auth: 'user',
    params: { alert_words: words },
    async handle({ services, realm, user }, params) {
      await services.runtime.executeUser(realm.realmId, user.userId, { type: 'alert_words.add', words: params.alert_words });
      return { alert_words: [...services.runtime.userState(realm.realmId, user.userId).alertWords] } satisfies WireResponse<'/users/me/alert_words', 'post'>;
    },
  }),

  route({
    method: 'DELETE',
    path: '/users/me/alert_words',
    auth: 'user',
    params: { alert_words: words },
    async handle({ services, realm, user }, params) {
      await services.runtime.executeUser(realm.realmId, user.userId, { type: 'alert_words.remove', words: params.alert_words });
      return { alert_words: [...services.runtime.userState(realm.realmId, user.userId).alertWords] } satisfies WireResponse<'/users/me/alert_words', 'delete'>;
    },
  }),
];
