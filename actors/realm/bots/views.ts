import { isAdmin, type RealmState, type UserProfile } from '../state.ts';
import { avatarUrl } from '../views.ts';
import { fullAvatarUrl } from '../avatars/urls.ts';
import type { BotProfile } from './state.ts';

const channelName = (state: RealmState, id: number | null) => (id === null ? null : (state.channels.get(id)?.name ?? null));

export const servicesView = (bot: BotProfile) =>
  bot.services.map((service) => ({ base_url: service.baseUrl, interface: service.interface, token: service.token }));

/** The `Bot` object of `realm_bots` and `realm_bot` add events: what administering a bot needs, its key included. */
export function botView(state: RealmState, user: UserProfile & { bot: BotProfile }) {
  const { bot } = user;
  return {
    email: user.email,
    user_id: user.userId,
    full_name: user.fullName,
    bot_type: bot.type,
    is_active: user.isActive,
    api_key: user.apiKey,
    default_sending_stream: channelName(state, bot.defaultSendingChannelId),
    default_events_register_stream: channelName(state, bot.defaultEventsRegisterChannelId),
    default_all_public_streams: bot.defaultAllPublicStreams,
    avatar_url: fullAvatarUrl(user),
    services: servicesView(bot),
    owner_id: bot.ownerId,
  };
}

/** GET /bots: the original's shorter entry (`username` is the bot's email), with the user id. */
export function botListEntry(state: RealmState, user: UserProfile & { bot: BotProfile }) {
  const { bot } = user;
  return {
    user_id: user.userId,
    username: user.email,
    full_name: user.fullName,
    api_key: user.apiKey,
    avatar_url: avatarUrl(user, false),
    default_sending_stream: channelName(state, bot.defaultSendingChannelId),
    default_events_register_stream: channelName(state, bot.defaultEventsRegisterChannelId),
    default_all_public_streams: bot.defaultAllPublicStreams,
  };
}

export const asBot = (user: UserProfile | undefined): (UserProfile & { bot: BotProfile }) | undefined =>
  user?.isBot && user.bot ? (user as UserProfile & { bot: BotProfile }) : undefined;

/** May the user administer the bot (configure it, see its key)? Its owner and the administrators. */
export const administers = (user: UserProfile, bot: BotProfile) => bot.ownerId === user.userId || isAdmin(user);

/**
 * Who is told about a bot's configuration: its owner and the active human administrators; a bot whose
 * default channels are private, its owner only (the administrators may not see those channels).
 */
export function botAdministrators(state: RealmState, bot: BotProfile): number[] {
  const privateChannel = (id: number | null) => id !== null && !!state.channels.get(id)?.inviteOnly;
  const out = new Set<number>();
  if (bot.ownerId !== null && state.users.get(bot.ownerId)?.isActive) out.add(bot.ownerId);
  if (!privateChannel(bot.defaultSendingChannelId) && !privateChannel(bot.defaultEventsRegisterChannelId)) {
    for (const user of state.users.values()) if (user.isActive && !user.isBot && isAdmin(user)) out.add(user.userId);
  }
  return [...out].sort((a, b) => a - b);
}

/** Registration's `realm_bots`: every bot for an administrator, the user's own otherwise. */
export function realmBotsView(state: RealmState, viewer: UserProfile) {
  const out = [];
  for (const user of state.users.values()) {
    const bot = asBot(user);
    if (bot && (isAdmin(viewer) || bot.bot.ownerId === viewer.userId)) out.push(botView(state, bot));
  }
  return out;
}
