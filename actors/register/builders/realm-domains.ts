import { realmDomainsView } from '../../realm/domains/views.ts';
import type { WireRegisterKeys } from '../../wire/events.ts';
import type { Builder } from '../builder.ts';

/** fetch type `realm_domains`: the domains sign-ups are limited to (with `emails_restricted_to_domains`). */
export const realmDomainsState: Builder = ({ realm, spectator }) => ({ realm_domains: spectator ? [] : realmDomainsView(realm.domains) }) satisfies WireRegisterKeys<'realm_domains'>;
