import { randomString } from '../../actors/ids.ts';

/**
 * A browser cannot set an Authorization header on a WebSocket, and an API key in the URL would end up in
 * proxy logs and browser history. So a browser first asks for a ticket over an authenticated REST call,
 * then opens the socket with it in the query string: the ticket is good once, for one user, for a short
 * time. Tickets live in memory only: one that a restart drops is asked for again.
 */
export const SOCKET_TICKET_SECONDS = 30;

/**
 * Unused tickets one user may hold at once; a new one past it drops that user's oldest. A browser asks for
 * one per connection attempt; without the rate limit (it can be switched off) nothing else bounds them.
 */
export const MAX_TICKETS_PER_USER = 100;

interface Ticket {
  realmId: number;
  userId: number;
  /** UNIX ms */
  expiresAt: number;
}

export class SocketTickets {
  /** in the order issued, which is also the order of expiry (one lifetime for all) */
  private readonly tickets = new Map<string, Ticket>();
  /** each user's unused tickets, oldest first (realm id and user id -> tickets) */
  private readonly byUser = new Map<string, string[]>();

  constructor(private readonly now: () => number) {}

  issue(realmId: number, userId: number): string {
    this.prune();
    const ticket = randomString(32);
    const holder = holderKey(realmId, userId);
    let own = this.byUser.get(holder);
    if (!own) this.byUser.set(holder, (own = []));
    if (own.length >= MAX_TICKETS_PER_USER) this.tickets.delete(own.shift()!);
    own.push(ticket);
    this.tickets.set(ticket, { realmId, userId, expiresAt: this.now() + SOCKET_TICKET_SECONDS * 1000 });
    return ticket;
  }

  /** The user the ticket was issued to, once; null for an unknown, used, expired or other realm's ticket. */
  redeem(ticket: string, realmId: number): number | null {
    const found = this.tickets.get(ticket);
    if (!found) return null;
    this.forget(ticket, found);
    if (found.expiresAt <= this.now() || found.realmId !== realmId) return null;
    return found.userId;
  }

  private prune(): void {
    const now = this.now();
    for (const [ticket, found] of this.tickets) {
      if (found.expiresAt > now) break;
      this.forget(ticket, found);
    }
  }

  private forget(ticket: string, found: Ticket): void {
    this.tickets.delete(ticket);
    const holder = holderKey(found.realmId, found.userId);
    const own = this.byUser.get(holder);
    if (!own) return;
    const at = own.indexOf(ticket);
    if (at >= 0) own.splice(at, 1);
    if (own.length === 0) this.byUser.delete(holder);
  }
}

const holderKey = (realmId: number, userId: number) => `${realmId}:${userId}`;
