import type { Caller } from '../commands.ts';
import type { InvitationTerms } from './state.ts';

interface NewInvitation extends InvitationTerms {
  caller: Caller;
  /** null: never expires */
  expiresInMinutes: number | null;
}

/** How many invitation mails (sends and resends) the organization may send in a day (the server's configuration); null: no limit. */
export type DailyInvitationLimit = number | null;

export type InvitationCommand =
  /** POST /invites: the addresses as the request listed them (decide checks and dedupes them) */
  | (NewInvitation & { type: 'invite.send'; emails: string[]; notifyReferrerOnJoin: boolean; dailyLimit: DailyInvitationLimit })
  | (NewInvitation & { type: 'invite.create_link' })
  | { type: 'invite.revoke'; caller: Caller; id: number; multiuse: boolean }
  | { type: 'invite.resend'; caller: Caller; id: number; dailyLimit: DailyInvitationLimit }
  /**
   * Someone followed an invitation's link and chose a name and password (hashed by the front end). `email`:
   * the address a reusable link's account takes; an email invitation's account takes the invited address.
   * `botDomain`: for the notification bot, if the notice to the inviter needs it made.
   */
  | { type: 'invite.accept'; key: string; email: string | null; fullName: string; passwordHash: string; botDomain?: string };
