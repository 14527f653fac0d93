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
 * kinds count their ids apart, as the original keeps them in two tables. Used, revoked and expired
 * invitations stay, so that following their link says what became of them, until new ones need their room
 * (RealmLimits.invitations).
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
  /** UNIX seconds of the invitation mails (sends and resends) of the last day, oldest first: the daily limit */
  mailedAt: number[];
}

export interface InvitationStoreRecord {
  invitations: Invitation[];
  nextEmailId: number;
  nextLinkId: number;
  /** absent in snapshots written before the daily limit: taken from the invitations' last mailing */
  mailedAt?: number[];
}

/** The window of the daily limit on invitation mails, in seconds. */
export const INVITATION_DAY_SECONDS = 24 * 60 * 60;

export function emptyInvitationStore(): InvitationStore {
  return { emails: new Map(), links: new Map(), byKey: new Map(), nextEmailId: 1, nextLinkId: 1, mailedAt: [] };
}

export function invitationStoreToRecord(store: InvitationStore): InvitationStoreRecord {
  return { invitations: [...store.emails.values(), ...store.links.values()], nextEmailId: store.nextEmailId, nextLinkId: store.nextLinkId, mailedAt: store.mailedAt };
}

export function invitationStoreFromRecord(record: InvitationStoreRecord | undefined): InvitationStore {
  const store = emptyInvitationStore();
  // Snapshots written before invitations existed have none.
  if (!record) return store;
  for (const invitation of record.invitations) addInvitation(store, structuredClone(invitation));
  store.nextEmailId = Math.max(store.nextEmailId, record.nextEmailId);
  store.nextLinkId = Math.max(store.nextLinkId, record.nextLinkId);
  store.mailedAt = record.mailedAt ? [...record.mailedAt] : [...store.emails.values()].map((invitation) => invitation.invitedAt).sort((a, b) => a - b);
  return store;
}

/** Notes `count` invitation mails sent at `at` (UNIX seconds) and forgets those older than a day. */
export function noteMailed(store: InvitationStore, at: number, count: number): void {
  for (let i = 0; i < count; i++) store.mailedAt.push(at);
  let old = 0;
  while (old < store.mailedAt.length && store.mailedAt[old]! <= at - INVITATION_DAY_SECONDS) old++;
  if (old > 0) store.mailedAt.splice(0, old);
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

/** Drops an invitation and its key (the ids keep counting on: a forgotten id is never given again). */
export function forgetInvitation(store: InvitationStore, multiuse: boolean, id: number): void {
  const kind = multiuse ? store.links : store.emails;
  const invitation = kind.get(id);
  if (!invitation) return;
  kind.delete(id);
  store.byKey.delete(invitation.key);
}

/** Still usable at `now` (UNIX ms): neither used, revoked nor expired. */
export const isUsable = (invitation: Invitation, now: number) =>
  invitation.status === 'active' && (invitation.expiresAt === null || invitation.expiresAt * 1000 > now);

/**
 * Fills the bound on invitations (RealmLimits.invitations): usable at `now` (UNIX ms), and not for an address
 * that has since got an account another way, which could only be refused. The others are forgotten for room.
 */
export const fillsBound = (invitation: Invitation, now: number, hasAccount: (email: string) => boolean) =>
  isUsable(invitation, now) && !(invitation.email !== null && hasAccount(invitation.email));
