import { z } from 'zod';
import { realmDomainsView } from '../../actors/realm/domains/views.ts';
import { p } from '../http/params.ts';
import { route } from './route.ts';

/** The domains new users' addresses must be of when `emails_restricted_to_domains` is on; owners change them. */
export const realmDomainRoutes = [
  route({
    method: 'GET',
    path: '/realm/domains',
    auth: 'user',
    params: {},
    handle: ({ realm }) => ({ domains: realmDomainsView(realm.domains) }),
  }),

  route({
    method: 'POST',
    path: '/realm/domains',
    auth: 'user',
    params: { domain: p.string(), allow_subdomains: p.json(z.boolean()) },
    async handle({ services, realm, user }, params) {
      const [change] = await services.runtime.execute(realm.realmId, {
        type: 'realm_domain.add', caller: { kind: 'user', userId: user.userId }, domain: params.domain, allowSubdomains: params.allow_subdomains,
        maxDomains: services.config.maxRealmDomains,
      });
      return { new_domain: change?.type === 'realm_domain.added' ? [change.domain.id, change.domain.domain] : null };
    },
  }),

  route({
    method: 'PATCH',
    path: '/realm/domains/{domain}',
    auth: 'user',
    params: { domain: p.string(), allow_subdomains: p.json(z.boolean()) },
    async handle({ services, realm, user }, params) {
      await services.runtime.execute(realm.realmId, {
        type: 'realm_domain.change', caller: { kind: 'user', userId: user.userId }, domain: params.domain, allowSubdomains: params.allow_subdomains,
      });
      return {};
    },
  }),

  route({
    method: 'DELETE',
    path: '/realm/domains/{domain}',
    auth: 'user',
    params: { domain: p.string() },
    async handle({ services, realm, user }, params) {
      await services.runtime.execute(realm.realmId, { type: 'realm_domain.remove', caller: { kind: 'user', userId: user.userId }, domain: params.domain });
      return {};
    },
  }),
];
