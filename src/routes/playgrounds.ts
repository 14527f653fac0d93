import { z } from 'zod';
import { p } from '../http/params.ts';
import { changeOf } from './change-of.ts';
import { route } from './route.ts';
import type { WireResponse } from '../../actors/wire/responses.ts';

/** Code playgrounds: administrators add and remove them; everyone reads them at registration. */
export const playgroundRoutes = [
  route({
    method: 'POST',
    path: '/realm/playgrounds',
    auth: 'user',
    params: { name: p.string(), pygments_language: p.string(), url_template: p.string() },
    async handle({ services, realm, user }, params) {
      const changes = await services.runtime.execute(realm.realmId, {
        type: 'playground.add', caller: { kind: 'user', userId: user.userId },
        name: params.name, pygmentsLanguage: params.pygments_language, urlTemplate: params.url_template,
      });
      return { id: changeOf(changes, 'playground.added').playground.id } satisfies WireResponse<'/realm/playgrounds', 'post'>;
    },
  }),

  route({
    method: 'DELETE',
    path: '/realm/playgrounds/{playground_id}',
    auth: 'user',
    params: { playground_id: p.int(z.number().int()) },
    async handle({ services, realm, user }, params) {
      await services.runtime.execute(realm.realmId, { type: 'playground.remove', caller: { kind: 'user', userId: user.userId }, id: params.playground_id });
      return {} satisfies WireResponse<'/realm/playgrounds/{playground_id}', 'delete'>;
    },
  }),
];
