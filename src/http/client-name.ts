/**
 * The name of the client a request came from, as the original records it on a message (`client`): the
 * request's `client` parameter where it has one, else the product named first in its User-Agent
 * ("ZulipMobile/27.2 (Android 14)" is "ZulipMobile"). For statistics and debugging only: nothing behaves
 * differently by it.
 */

/** The original's Client.name column holds this many characters. */
const MAX_CLIENT_NAME = 30;

/** The original's names for a request without a User-Agent, and for one whose User-Agent it cannot read. */
const UNSPECIFIED = 'Unspecified';
const UNPARSABLE = 'Unparsable';

/**
 * The original's reading of a User-Agent (zerver/lib/user_agent.py): a name up to the first '/' (a space
 * may end it before a version), then the version, then anything.
 */
const USER_AGENT = /^([^/ ]*[^0-9/(]*)(?:\/[^/ ]*)?(?:[ /].*)?$/;

/**
 * Of a User-Agent, only its start is read: the name is at its start, and the pattern above backtracks over
 * the whole of a string it does not match (quadratic in its length).
 */
const READ_CHARS = 200;

/**
 * User-Agents seen lately and their names: a server's clients send few distinct ones, so a send mostly reads
 * its name here. Bounded, since a caller can send any User-Agent at all.
 */
const CACHE_ENTRIES = 256;
const cache = new Map<string, string>();

export function clientName(parameter: string | undefined, userAgent: string | undefined): string {
  if (parameter !== undefined && parameter !== '') return parameter.slice(0, MAX_CLIENT_NAME);
  if (!userAgent) return UNSPECIFIED;
  let name = cache.get(userAgent);
  if (name === undefined) {
    name = fromUserAgent(userAgent);
    // Forgets everything at once when full: cheaper than tracking recency, and refilled by the next few sends.
    if (cache.size >= CACHE_ENTRIES) cache.clear();
    cache.set(userAgent, name);
  }
  return name;
}

function fromUserAgent(userAgent: string): string {
  const match = USER_AGENT.exec(userAgent.slice(0, READ_CHARS));
  if (!match) return UNPARSABLE;
  const name = match[1]!.trim().slice(0, MAX_CLIENT_NAME);
  return name === '' ? UNSPECIFIED : name;
}
