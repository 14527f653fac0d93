import type { RealmDomain } from './state.ts';

export type RealmDomainChange =
  | { type: 'realm_domain.added'; domain: RealmDomain }
  | { type: 'realm_domain.changed'; domain: RealmDomain }
  | { type: 'realm_domain.removed'; domain: string };
