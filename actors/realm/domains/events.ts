import type { ApiEvent } from '../../events.ts';
import type { RealmDomainChange } from './changes.ts';
import type { WireEventOf } from '../../wire/events.ts';

/** `realm_domains` events, for everyone in the realm. */
export function realmDomainEvents(change: RealmDomainChange): ApiEvent[] {
  switch (change.type) {
    case 'realm_domain.added':
      return [{ type: 'realm_domains', op: 'add', realm_domain: { domain: change.domain.domain, allow_subdomains: change.domain.allowSubdomains } } satisfies WireEventOf<'realm_domains', 'add'>];
    case 'realm_domain.changed':
      return [{ type: 'realm_domains', op: 'change', realm_domain: { domain: change.domain.domain, allow_subdomains: change.domain.allowSubdomains } } satisfies WireEventOf<'realm_domains', 'change'>];
    case 'realm_domain.removed':
      return [{ type: 'realm_domains', op: 'remove', domain: change.domain } satisfies WireEventOf<'realm_domains', 'remove'>];
  }
}
