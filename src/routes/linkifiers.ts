import { z } from 'zod';
import { notAdmin } from '../../actors/errors.ts';
import { linkifiersView } from '../../actors/realm/linkifiers/views.ts';
import { isAdmin, type UserProfile } from '../../actors/realm/state.ts';
import { p } from '../http/params.ts';
import { changeOf } from './change-of.ts';
import { route } from './route.ts';
import type { WireResponse } from '../../actors/wire/responses.ts';

const requireAdmin = (user: UserProfile) => {
  if (!isAdmin(user)) throw notAdmin();
};
const caller = (user: UserProfile) => ({ kind: 'user' as const, userId: user.userId });
const filterId = p.int(z.number().int());

export const linkifierRoutes = [
  route({
    method: 'GET',
    path: '/realm/linkifiers',
    auth: 'user',
    params: {},
    handle: ({ realm }) => ({ linkifiers: linkifiersView(realm.linkifiers) }) satisfies WireResponse<'/realm/linkifiers', 'get'>,
  }),

  route({
    method: 'PATCH',
    path: '/realm/linkifiers',
    auth: 'user',
    authorize: requireAdmin,
    params: { ordered_linkifier_ids: p.json(z.array(z.number().int())) },
    async handle({ services, realm, user }, params) {
      await services.runtime.execute(realm.realmId, { type: 'linkifier.reorder', caller: caller(user), order: params.ordered_linkifier_ids });
      return {} satisfies WireResponse<'/realm/linkifiers', 'patch'>;
    },
  }),

  route({
    method: 'POST',
    path: '/realm/filters',
    auth: 'user',
    authorize: requireAdmin,
    params: { pattern: p.string(), url_template: p.string() },
    async handle({ services, realm, user }, params) {
      const changes = await services.runtime.execute(realm.realmId, {
        type: 'linkifier.add', caller: caller(user), pattern: params.pattern, urlTemplate: params.url_template,
        maxLinkifiers: services.config.maxLinkifiersPerRealm,
      });
      return { id: changeOf(changes, 'linkifier.added').linkifier.id } satisfies WireResponse<'/realm/filters', 'post'>;
    },
  }),

  route({
    method: 'PATCH',
    path: '/realm/filters/{filter_id}',
    auth: 'user',
    authorize: requireAdmin,
    params: { filter_id: filterId, pattern: p.string(), url_template: p.string() },
    async handle({ services, realm, user }, params) {
      await services.runtime.execute(realm.realmId, {
        type: 'linkifier.update', caller: caller(user), id: params.filter_id, pattern: params.pattern, urlTemplate: params.url_template,
      });
      return {} satisfies WireResponse<'/realm/filters/{filter_id}', 'patch'>;
    },
  }),

  route({
    method: 'DELETE',
    path: '/realm/filters/{filter_id}',
    auth: 'user',
    authorize: requireAdmin,
    params: { filter_id: filterId },
    async handle({ services, realm, user }, params) {
      await services.runtime.execute(realm.realmId, { type: 'linkifier.remove', caller: caller(user), id: params.filter_id });
      return {} satisfies WireResponse<'/realm/filters/{filter_id}', 'delete'>;
    },
  }),
];
