import type { UserProfile } from '../state.ts';

/** Bot types of the API. */
export const BotType = {
  generic: 1,
  incomingWebhook: 2,
  outgoingWebhook: 3,
  embedded: 4,
} as const;
export type BotType = (typeof BotType)[keyof typeof BotType];

/**
 * Embedded bots run inside the original server (its EMBEDDED_BOTS_ENABLED, off by default); this server
 * runs none, so it offers the other three types.
 */
export const CREATABLE_BOT_TYPES: readonly BotType[] = [BotType.generic, BotType.incomingWebhook, BotType.outgoingWebhook];

/** Outgoing webhook interfaces: the generic one and the Slack-compatible one. */
export const SERVICE_INTERFACES = [1, 2] as const;

/** Where an outgoing webhook bot would post the messages it is mentioned in (stored; this server sends nothing). */
export interface BotService {
  name: string;
  baseUrl: string;
  interface: number;
  token: string;
}

/** What a bot account has beyond a user's (UserProfile.bot). */
export interface BotProfile {
  type: BotType;
  /** null only for bots the server itself owns */
  ownerId: number | null;
  defaultSendingChannelId: number | null;
  defaultEventsRegisterChannelId: number | null;
  defaultAllPublicStreams: boolean;
  services: BotService[];
}

/**
 * The domain of bot emails: the realm's host when it can end an email address, else a reserved name that
 * can (an IP address or `localhost` cannot; the original falls back to its FAKE_EMAIL_DOMAIN likewise).
 */
export function botDomainOf(realmUrl: string): string {
  const host = new URL(realmUrl).hostname;
  return /^([a-z0-9-]+\.)+[a-z]{2,}$/i.test(host) ? host.toLowerCase() : 'bots.invalid';
}

/** How many active bots each person owns: what CHAT_MAX_BOTS_PER_USER bounds (deactivated bots do not count). */
export function activeBotsByOwner(users: Iterable<UserProfile>): Map<number, number> {
  const owned = new Map<number, number>();
  for (const user of users) {
    const ownerId = user.bot?.ownerId;
    if (user.isActive && ownerId != null) owned.set(ownerId, (owned.get(ownerId) ?? 0) + 1);
  }
  return owned;
}
