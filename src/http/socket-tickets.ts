import { randomString } from '../../actors/ids.ts';

/**
 * A browser cannot set an Authorization header on a WebSocket, and an API key in the URL would end up in
 * proxy logs and browser history. So a browser first asks for a ticket over an authenticated REST call,
 * then opens the socket with it in the query string: the ticket is good once, for one user, for a short
 * time. Tickets live in memory only: one that a restart drops is asked for again.
 */
export const SOCKET_TICKET_SECONDS = 30;

interface Ticket {
  realmId: number;
  userId: number;
  /** UNIX ms */
  expiresAt: number;
}

export class SocketTickets {
  /** in the order issued, which is also the order of expiry (one lifetime for all) */
  private readonly tickets = new Map<string, Ticket>();

  constructor(private readonly now: () => number) {}

  issue(realmId: number, userId: number): string {
    this.prune();
    const ticket = randomString(32);
    this.tickets.set(ticket, { realmId, userId, expiresAt: this.now() + SOCKET_TICKET_SECONDS * 1000 });
    return ticket;
  }

  /** The user the ticket was issued to, once; null for an unknown, used, expired or other realm's ticket. */
  redeem(ticket: string, realmId: number): number | null {
    const found = this.tickets.get(ticket);
    if (!found) return null;
    this.tickets.delete(ticket);
    if (found.expiresAt <= this.now() || found.realmId !== realmId) return null;
    return found.userId;
  }

  private prune(): void {
    const now = this.now();
    for (const [ticket, { expiresAt }] of this.tickets) {
      if (expiresAt > now) break;
      this.tickets.delete(ticket);
    }
  }
}
