import type { RealmDomainList } from './state.ts';

/** The API's realm domain objects. */
export const realmDomainsView = (domains: RealmDomainList) => domains.map((entry) => ({ domain: entry.domain, allow_subdomains: entry.allowSubdomains }));
