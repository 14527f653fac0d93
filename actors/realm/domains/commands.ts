import type { Caller } from '../commands.ts';

export type RealmDomainCommand =
  | { type: 'realm_domain.add'; caller: Caller; domain: string; allowSubdomains: boolean; maxDomains: number }
  | { type: 'realm_domain.change'; caller: Caller; domain: string; allowSubdomains: boolean }
  | { type: 'realm_domain.remove'; caller: Caller; domain: string };
