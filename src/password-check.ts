import type { ApiRequest } from './http/request.ts';
import type { HashLane } from './password-queue.ts';
import { verifyPassword } from './passwords.ts';
import type { AppServices } from './services.ts';

/**
 * Checks a password as a login does: within the client's failure budgets on the account and overall, in the
 * hashing line, and for a caller without credentials within the server-wide budget too. A missing account
 * (`stored` null) costs the same hash as an existing one, so neither the answer's timing nor its price tells
 * which accounts exist. Throws 429 when a budget or the line refuses.
 */
export async function checkPassword(
  services: AppServices,
  request: ApiRequest,
  lane: HashLane,
  account: { realmId: number; username: string; stored: string | null },
  password: string,
): Promise<boolean> {
  const attempt = services.clientBudgets.loginAttempt(request, account.realmId, account.username);
  let valid: boolean;
  try {
    if (lane === 'anonymous') services.clientBudgets.costlyRequest();
    valid = await services.passwordQueue.run(lane, () => verifyPassword(password, account.stored));
  } catch (error) {
    attempt.giveBack();
    throw error;
  }
  if (valid) attempt.giveBack();
  else attempt.failed();
  return valid;
}
