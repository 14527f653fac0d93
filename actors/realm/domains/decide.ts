import { badRequest, ChatError, ErrorCode } from '../../errors.ts';
import type { RealmChange } from '../changes.ts';
import type { RealmState } from '../state.ts';
import { Role } from '../roles.ts';
import type { RealmDomainCommand } from './commands.ts';

/** The original's check of a domain (zerver/lib/domains.py): dot-separated labels of letters, digits, '-' and '_'. */
const LABEL = /^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?$/;
const MAX_DOMAIN_LENGTH = 255;

/** Allowed domains are the owners' to change; removing the last one lifts the restriction, as in the original. */
export function decideRealmDomain(state: RealmState, command: RealmDomainCommand): RealmChange[] {
  if (command.caller.kind === 'user' && state.users.get(command.caller.userId)?.role !== Role.owner) {
    throw new ChatError(ErrorCode.UNAUTHORIZED_PRINCIPAL, 'Must be an organization owner');
  }
  const domain = command.domain.trim().toLowerCase();
  const existing = state.domains.find((entry) => entry.domain === domain);
  switch (command.type) {
    case 'realm_domain.add': {
      const problem = domainProblem(domain);
      if (problem) throw badRequest(`Invalid domain: ${problem}`);
      if (existing) throw badRequest(`The domain ${domain} is already a part of your organization.`);
      if (state.domains.length >= command.maxDomains) throw badRequest(`This organization already has ${command.maxDomains} domains, the most it may have`);
      const id = Math.max(0, ...state.domains.map((entry) => entry.id)) + 1;
      return [{ type: 'realm_domain.added', domain: { id, domain, allowSubdomains: command.allowSubdomains } }];
    }
    case 'realm_domain.change':
      if (!existing) throw badRequest(`No entry found for domain ${domain}.`);
      return [{ type: 'realm_domain.changed', domain: { ...existing, allowSubdomains: command.allowSubdomains } }];
    case 'realm_domain.remove': {
      if (!existing) throw badRequest(`No entry found for domain ${domain}.`);
      const changes: RealmChange[] = [{ type: 'realm_domain.removed', domain }];
      if (state.domains.length === 1 && state.settings.emails_restricted_to_domains) {
        changes.push({ type: 'realm.property_changed', name: 'emails_restricted_to_domains', value: false });
      }
      return changes;
    }
  }
}

function domainProblem(domain: string): string | null {
  if (!domain) return 'Domain can\'t be empty.';
  if (domain.length > MAX_DOMAIN_LENGTH) return 'Domain is too long';
  if (domain.split('.').some((label) => !LABEL.test(label))) return 'Domain can only contain letters, digits, dots, hyphens and underscores.';
  return null;
}

/**
 * Why an address may not join the realm (the original's realm email validator), or null: with
 * `emails_restricted_to_domains`, only addresses of its domains (or their subdomains, where allowed), without '+'.
 */
export function addressNotAllowed(state: RealmState, email: string): 'plus' | 'domain' | null {
  if (!state.settings.emails_restricted_to_domains) return null;
  const at = email.lastIndexOf('@');
  if (email.slice(0, at).includes('+')) return 'plus';
  let domain = email.slice(at + 1).toLowerCase();
  if (state.domains.some((entry) => entry.domain === domain)) return null;
  while (domain.includes('.')) {
    domain = domain.slice(domain.indexOf('.') + 1);
    if (state.domains.some((entry) => entry.domain === domain && entry.allowSubdomains)) return null;
  }
  return 'domain';
}
