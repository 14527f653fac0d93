import type { Budget, ClientBudgetConfig } from '../config.ts';
import { clientKey } from './client-address.ts';
import { RateLimiter, refuseOver } from './rate-limit.ts';
import type { ApiRequest } from './request.ts';

/** A request made inside the process (a test calling dispatch) has no address; such requests share one budget. */
const IN_PROCESS = 'in-process';

const limiterOf = (budget: Budget | null, now: () => number) => (budget ? new RateLimiter(budget.limit, budget.windowSeconds, now) : null);

/**
 * What callers without credentials may spend. Every such request counts against its client's address (the
 * original's api_by_ip); the costly ones (a password checked or hashed, an anonymous registration's state)
 * also against one server-wide budget, so that many addresses together cannot take the server's hashing.
 * Failed logins are counted per client and account, so that a guesser never locks the account's owner out,
 * and per client across accounts, so that guessing over many usernames is limited too.
 */
export class ClientBudgets {
  private readonly anonymous: RateLimiter | null;
  private readonly costly: RateLimiter | null;
  private readonly loginPerAccount: RateLimiter;
  private readonly loginPerClient: RateLimiter;
  private readonly linkJoins: RateLimiter | null;

  constructor(config: ClientBudgetConfig, login: Budget, now: () => number = Date.now) {
    this.anonymous = limiterOf(config.anonymous, now);
    this.costly = limiterOf(config.costly, now);
    this.loginPerAccount = new RateLimiter(login.limit, login.windowSeconds, now);
    this.loginPerClient = new RateLimiter(config.loginFailures.limit, config.loginFailures.windowSeconds, now);
    this.linkJoins = limiterOf(config.linkJoins, now);
  }

  /** Spends one request of a caller without credentials. */
  anonymousRequest(request: ApiRequest): void {
    if (!this.anonymous) return;
    refuseOver(this.anonymous, this.anonymous.hit(clientOf(request)), 'API usage exceeded rate limit');
  }

  /** Spends one of the server-wide costly requests of callers without credentials. */
  costlyRequest(): void {
    if (!this.costly) return;
    refuseOver(this.costly, this.costly.hit('all'), 'Too many requests from unauthenticated clients; try again later');
  }

  /**
   * Admits a login attempt, or refuses it (429). On its account, an attempt counts from before its
   * password is checked, so that guesses sent in parallel are limited too. Across accounts only failures
   * count: logins sent together from one address (an office behind one router) are not refused for being
   * many; how many guesses one address can have in flight at once is bounded by its request budget and by
   * the hashing line.
   */
  loginAttempt(request: ApiRequest, realmId: number, username: string): LoginAttempt {
    const client = clientOf(request);
    const account = `${client} ${realmId}:${username.toLowerCase()}`;
    const message = 'Too many failed login attempts; try again later';
    refuseOver(this.loginPerAccount, this.loginPerAccount.hit(account), message);
    // Whether the client has failures left, without spending one: spent and given back at once.
    const perClient = this.loginPerClient.hit(client);
    if (perClient.allowed) this.loginPerClient.refund(client);
    else this.loginPerAccount.refund(account);
    refuseOver(this.loginPerClient, perClient, message);
    return {
      giveBack: () => this.loginPerAccount.refund(account),
      failed: () => void this.loginPerClient.hit(client),
    };
  }

  /** Counts an account made through a reusable invitation link; returns what gives it back when none was made. */
  linkJoin(request: ApiRequest): () => void {
    const limiter = this.linkJoins;
    if (!limiter) return () => {};
    const client = clientOf(request);
    refuseOver(limiter, limiter.hit(client), 'Too many accounts made from this address; try again later');
    return () => limiter.refund(client);
  }
}

/** A login admitted by the budgets, to be settled once its password has been checked. */
export interface LoginAttempt {
  /** the password was right, or was never checked: the attempt does not count */
  giveBack(): void;
  /** the password was wrong: a failure of the client's too */
  failed(): void;
}

function clientOf(request: ApiRequest): string {
  request.clientAddress ??= request.connection?.clientAddress();
  return request.clientAddress === undefined ? IN_PROCESS : clientKey(request.clientAddress);
}
