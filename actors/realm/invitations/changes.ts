import type { Invitation } from './state.ts';

export type InvitationChange =
  | { type: 'invitations.created'; invitations: Invitation[] }
  | { type: 'invitation.revoked'; id: number; multiuse: boolean }
  /** sent again: the link's validity starts over from `at` (UNIX seconds) */
  | { type: 'invitation.resent'; id: number; at: number; expiresAt: number | null }
  /** an email invitation's account was made: it is used, and any other for the same address is revoked */
  | { type: 'invitation.used'; id: number }
  /** no longer usable ones of a kind, forgotten to make room for new ones (RealmLimits.invitations): their keys stop naming anything */
  | { type: 'invitations.forgotten'; multiuse: boolean; ids: number[] };
