/** A domain whose addresses may join the realm when `emails_restricted_to_domains` is on. */
export interface RealmDomain {
  /** POST /realm/domains answers it; one more than the highest in use */
  id: number;
  /** lower-case */
  domain: string;
  /** its subdomains' addresses too */
  allowSubdomains: boolean;
}

/** In the order they were added; replaced whole by every change (plain data, stored as it is). */
export type RealmDomainList = readonly RealmDomain[];
