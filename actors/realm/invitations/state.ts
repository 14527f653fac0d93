import type { Role } from '../roles.ts';

export type InvitationStatus = 'active' | 'used' | 'revoked';

/** What an account made from an invitation gets. */
export interface InvitationTerms {
  invitedAs: Role;
  /** channels to subscribe the new user to, besides the defaults when `includeRealmDefaultSubscriptions` */
  channelIds: number[];
  groupIds: number[];
  includeRealmDefaultSubscriptions: boolean;
}

/**
 * An email invitation (one account, for one address) or a reusable link (any number of accounts). The two
 * kinds count their ids apart, as the original keeps them in two tables. Used and revoked invitations stay,
 * so that following their link says what became of them.
 */
export interface Invitation extends InvitationTerms {
  id: number;
  multiuse: boolean;
  /** the invited address; null for a link */
  email: string | null;
  /** the secret the link carries (the credential of the account-creation page) */
  key: string;
  invitedBy: number;
  /** UNIX seconds: when sent, or last resent */
  invitedAt: number;
  /** UNIX seconds; null: never expires */
  expiresAt: number | null;
  notifyReferrerOnJoin: boolean;
  status: InvitationStatus;
}

export interface InvitationStore {
  emails: Map<number, Invitation>;
  links: Map<number, Invitation>;
  /** index: key -> invitation (the same objects as above; rebuilt on load) */
  byKey: Map<string, Invitation>;
  nextEmailId: number;
  nextLinkId: number;
}

export interface InvitationStoreRecord {
  invitations: Invitation[];
  nextEmailId: number;
  nextLinkId: number;
}

export function emptyInvitationStore(): InvitationStore {
  return { emails: new Map(), links: new Map(), byKey: new Map(), nextEmailId: 1, nextLinkId: 1 };
}

export function invitationStoreToRecord(store: InvitationStore): InvitationStoreRecord {
  return { invitations: [...store.emails.values(), ...store.links.values()], nextEmailId: store.nextEmailId, nextLinkId: store.nextLinkId };
}

export function invitationStoreFromRecord(record: InvitationStoreRecord | undefined): InvitationStore {
  const store = emptyInvitationStore();
  // Snapshots written before invitations existed have none.
  if (!record) return store;
  for (const invitation of record.invitations) addInvitation(store, structuredClone(invitation));
  store.nextEmailId = Math.max(store.nextEmailId, record.nextEmailId);
  store.nextLinkId = Math.max(store.nextLinkId, record.nextLinkId);
  return store;
}

export function addInvitation(store: InvitationStore, invitation: Invitation): void {
  if (invitation.multiuse) {
    store.links.set(invitation.id, invitation);
    store.nextLinkId = Math.max(store.nextLinkId, invitation.id + 1);
  } else {
    store.emails.set(invitation.id, invitation);
    store.nextEmailId = Math.max(store.nextEmailId, invitation.id + 1);
  }
  store.byKey.set(invitation.key, invitation);
}

/** Still usable at `now` (UNIX ms): neither used, revoked nor expired. */
export const isUsable = (invitation: Invitation, now: number) =>
  invitation.status === 'active' && (invitation.expiresAt === null || invitation.expiresAt * 1000 > now);
