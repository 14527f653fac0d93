import { navigationViewsView } from '../../actors/user/views.ts';
import { p } from '../http/params.ts';
import { route } from './route.ts';
import type { WireResponse } from '../../actors/wire/responses.ts';

/** A user's saved left-sidebar views. */
export const navigationViewRoutes = [
  route({
    method: 'GET',
    path: '/navigation_views',
    auth: 'user',
    params: {},
    handle: ({ services, realm, user }) => ({ navigation_views: navigationViewsView(services.runtime.userState(realm.realmId, user.userId)) }) satisfies WireResponse<'/navigation_views', 'get'>,
  }),

  route({
    method: 'POST',
    path: '/navigation_views',
    auth: 'user',
    params: { fragment: p.string(), is_pinned: p.bool(), name: p.string().optional() },
    async handle({ services, realm, user }, params) {
      await services.runtime.executeUser(realm.realmId, user.userId, {
        type: 'navigation_view.add', fragment: params.fragment, isPinned: params.is_pinned, name: params.name, maxViews: services.config.maxNavigationViewsPerUser,
      });
      return {} satisfies WireResponse<'/navigation_views', 'post'>;
    },
  }),

  route({
    method: 'PATCH',
    path: '/navigation_views/{fragment}',
    auth: 'user',
    params: { fragment: p.string(), is_pinned: p.bool().optional(), name: p.string().optional() },
    async handle({ services, realm, user }, params) {
      await services.runtime.executeUser(realm.realmId, user.userId, { type: 'navigation_view.update', fragment: params.fragment, isPinned: params.is_pinned, name: params.name });
      return {} satisfies WireResponse<'/navigation_views/{fragment}', 'patch'>;
    },
  }),

  route({
    method: 'DELETE',
    path: '/navigation_views/{fragment}',
    auth: 'user',
    params: { fragment: p.string() },
    async handle({ services, realm, user }, params) {
      await services.runtime.executeUser(realm.realmId, user.userId, { type: 'navigation_view.remove', fragment: params.fragment });
      return {} satisfies WireResponse<'/navigation_views/{fragment}', 'delete'>;
    },
  }),
];
