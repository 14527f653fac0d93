import type { RealmChange } from '../changes.ts';
import type { ChannelCommand } from '../channels/commands.ts';
import type { Channel } from '../channels/state.ts';
import type { Clock } from '../decide.ts';
import type { MessageChange } from '../messages/changes.ts';
import { recipientKey, type MessageRecipient, type SentMessage } from '../messages/state.ts';
import type { RealmState, UserProfile } from '../state.ts';
import { SERVER_LIMITS } from '../../register/realm-limits.ts';
import { newNotificationBot } from './state.ts';

/** The original's topics for its notices. */
export const NEW_CHANNELS_TOPIC = 'new channels';
export const SIGNUPS_TOPIC = 'signups';

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };
const escapeHtml = (text: string) => text.replace(/[&<>"]/g, (c) => ENTITIES[c]!);

/**
 * Notices are rendered here rather than by the Markdown renderer: they may name a channel created by the
 * same command, which the state being decided on does not hold yet. The markup is the renderer's.
 */
export const silentMention = (user: UserProfile) => ({
  markdown: `@_**${user.fullName}|${user.userId}**`,
  html: `<span class="user-mention silent" data-user-id="${user.userId}">${escapeHtml(user.fullName)}</span>`,
});

export function channelLink(channel: Pick<Channel, 'id' | 'name'>, topic?: string) {
  const base = `/#narrow/channel/${channel.id}-${encodeURIComponent(channel.name.replace(/ /g, '-'))}`;
  if (topic === undefined) {
    return { markdown: `#**${channel.name}**`, html: `<a class="stream" data-stream-id="${channel.id}" href="${escapeHtml(base)}">#${escapeHtml(channel.name)}</a>` };
  }
  const href = `${base}/topic/${encodeURIComponent(topic)}`;
  return {
    markdown: `#**${channel.name}>${topic}**`,
    html: `<a class="stream-topic" data-stream-id="${channel.id}" href="${escapeHtml(href)}">#${escapeHtml(channel.name)} &gt; ${escapeHtml(topic)}</a>`,
  };
}

/** A notice's text in Markdown and HTML, built from plain text and the pieces above. */
export function notice(...parts: (string | { markdown: string; html: string })[]) {
  const markdown = parts.map((part) => (typeof part === 'string' ? part : part.markdown)).join('');
  const html = parts.map((part) => (typeof part === 'string' ? escapeHtml(part) : part.html)).join('');
  return { markdown, html: `<p>${html}</p>` };
}

/**
 * Posts notices as the notification bot, within one command: message and recipient ids continue past those
 * the command's earlier changes took. The bot holds none of its messages (it has no flags and no queues).
 */
export class BotPoster {
  private nextId: number;
  private nextRecipientId: number;
  private readonly recipientIds = new Map<string, number>();
  readonly changes: RealmChange[] = [];

  constructor(
    private readonly state: RealmState,
    private readonly bot: UserProfile,
    private readonly clock: Clock,
    /** notices the same command posted already, whose ids this poster continues past */
    earlier: readonly RealmChange[] = [],
  ) {
    this.nextId = state.messages.nextId;
    this.nextRecipientId = state.messages.nextRecipientId;
    for (const change of earlier) {
      if (change.type !== 'message.sent') continue;
      this.nextId = Math.max(this.nextId, change.message.id + 1);
      this.nextRecipientId = Math.max(this.nextRecipientId, change.message.recipientId + 1);
      this.recipientIds.set(recipientKey(change.message.recipient), change.message.recipientId);
    }
  }

  post(channelId: number, topic: string, text: { markdown: string; html: string }, userIds: Iterable<number>): void {
    this.send({ kind: 'channel', channelId, topic }, text, userIds);
  }

  /**
   * A direct message to one user (a reminder). `scheduled`: the user's scheduled message it delivers, which
   * applying the send removes from the user's actor.
   */
  postDirect(userId: number, text: { markdown: string; html: string }, scheduled?: { scheduledMessageId: number; ownerId: number }): void {
    const userIds = [this.bot.userId, userId].sort((a, b) => a - b);
    this.send({ kind: 'direct', userIds }, text, userIds, scheduled);
  }

  private send(recipient: MessageRecipient, text: { markdown: string; html: string }, userIds: Iterable<number>, scheduled?: { scheduledMessageId: number; ownerId: number }): void {
    const key = recipientKey(recipient);
    let recipientId = this.state.messages.recipientIds.get(key) ?? this.recipientIds.get(key);
    if (recipientId === undefined) this.recipientIds.set(key, (recipientId = this.nextRecipientId++));
    const message: SentMessage = {
      id: this.nextId++,
      senderId: this.bot.userId,
      recipient,
      recipientId,
      content: text.markdown,
      renderedContent: text.html,
      isMeMessage: false,
      // Mentions in notices are silent: they flag nobody.
      mentions: { userIds: [], streamWildcard: false, topicWildcardUserIds: [] },
      timestamp: Math.floor(this.clock.now() / 1000),
      client: 'Internal',
      editHistory: [],
      reactions: [],
      userIds: [...new Set(userIds)].sort((a, b) => a - b),
      historicalUserIds: [],
    };
    const change: MessageChange = { type: 'message.sent', message, readBySender: true };
    if (scheduled) Object.assign(change, { scheduledMessageId: scheduled.scheduledMessageId, scheduledOwnerId: scheduled.ownerId });
    this.changes.push(change);
  }
}

/** The channel's subscribers once `pending` (changes of the same command) are applied. */
export function subscribersAfter(state: RealmState, channelId: number, pending: readonly RealmChange[]): Set<number> {
  const out = new Set(state.subscriptions.get(channelId)?.keys() ?? []);
  for (const change of pending) {
    if (change.type === 'subscriptions.added') for (const entry of change.entries) if (entry.channelId === channelId) out.add(entry.userId);
    if (change.type === 'subscriptions.removed') for (const entry of change.entries) if (entry.channelId === channelId) out.delete(entry.userId);
  }
  return out;
}

/** The channel a notice setting names, if it still takes notices. */
function announcementChannel(state: RealmState, channelId: number): Channel | undefined {
  const channel = channelId === -1 ? undefined : state.channels.get(channelId);
  return channel && !channel.isArchived ? channel : undefined;
}

/**
 * POST /users/me/subscriptions and /channels/create with `announce`: the bot tells the new-channel
 * announcements channel about the public channels the command created, as the original words it.
 */
export function newChannelNotices(
  state: RealmState,
  command: Extract<ChannelCommand, { type: 'channel.subscribe' }>,
  changes: readonly RealmChange[],
  clock: Clock,
): RealmChange[] {
  const bot = state.notificationBot;
  const target = announcementChannel(state, state.settings.new_stream_announcements_stream_id);
  if (!command.options.announce || !bot || !target || command.caller.kind !== 'user') return [];
  const creator = state.users.get(command.caller.userId);
  const created = changes.flatMap((change) => (change.type === 'channel.created' && !change.channel.inviteOnly ? [change.channel] : []));
  if (!creator || created.length === 0) return [];
  const links = created.map((channel) => channelLink(channel));
  const text =
    links.length === 1
      ? notice(silentMention(creator), ' created a new channel ', links[0]!, '.')
      : notice(silentMention(creator), ' created the following channels: ', ...links.flatMap((link, i) => (i ? [', ', link] : [link])), '.');
  const poster = new BotPoster(state, bot, clock);
  poster.post(target.id, NEW_CHANNELS_TOPIC, text, subscribersAfter(state, target.id, changes));
  return poster.changes;
}

/** A new user: the bot tells the signup announcements channel. */
export function signupNotices(state: RealmState, changes: readonly RealmChange[], clock: Clock): RealmChange[] {
  const bot = state.notificationBot;
  const target = announcementChannel(state, state.settings.signup_announcements_stream_id);
  const created = changes.find((change) => change.type === 'user.created');
  if (!bot || !target || created?.type !== 'user.created' || created.user.isBot) return [];
  const poster = new BotPoster(state, bot, clock);
  poster.post(target.id, SIGNUPS_TOPIC, notice(silentMention(created.user), ' joined this organization.'), subscribersAfter(state, target.id, changes));
  return poster.changes;
}

/** The original's bound: above this many users subscribed by one request, none of them is told. */
export const MAX_BULK_NEW_SUBSCRIPTION_MESSAGES = SERVER_LIMITS.max_bulk_new_subscription_messages;

/**
 * `send_new_subscription_messages`: the notification bot tells each person the caller subscribed (not the
 * caller, not bots) of the channels they were added to, but for channels the request created, as the
 * original's `send_messages_for_new_subscribers` words it. `sent`: whether they were told (not above the bound).
 */
export function newSubscriptionNotices(
  state: RealmState,
  command: Extract<ChannelCommand, { type: 'channel.subscribe' }>,
  changes: readonly RealmChange[],
  clock: Clock,
): { changes: RealmChange[]; sent: boolean } {
  if (!command.newSubscriptionMessages || command.caller.kind !== 'user') return { changes: [], sent: false };
  const actor = state.users.get(command.caller.userId);
  const created = new Set(changes.flatMap((change) => (change.type === 'channel.created' ? [change.channel.id] : [])));
  const channelsOf = new Map<number, Channel[]>();
  for (const change of changes) {
    if (change.type !== 'subscriptions.added') continue;
    for (const { userId, channelId } of change.entries) {
      if (userId === actor?.userId || state.users.get(userId)?.isBot !== false) continue;
      const list = channelsOf.get(userId) ?? [];
      channelsOf.set(userId, list);
      const channel = state.channels.get(channelId);
      if (channel && !created.has(channelId)) list.push(channel);
    }
  }
  if (!actor || channelsOf.size > MAX_BULK_NEW_SUBSCRIPTION_MESSAGES) return { changes: [], sent: false };
  const out: RealmChange[] = [];
  let bot = state.notificationBot;
  if (!bot && [...channelsOf.values()].some((list) => list.length > 0)) {
    bot = newNotificationBot(state, command.newSubscriptionMessages.botDomain, clock.now());
    out.push({ type: 'notification_bot.created', bot });
  }
  if (!bot) return { changes: [], sent: true };
  const poster = new BotPoster(state, bot, clock, changes);
  for (const [userId, channels] of channelsOf) {
    if (channels.length === 0) continue;
    const sorted = [...channels].sort((a, b) => a.name.localeCompare(b.name));
    const mention = silentMention(actor);
    if (sorted.length === 1) {
      poster.postDirect(userId, notice(mention, ' subscribed you to the channel ', channelLink(sorted[0]!), '.'));
      continue;
    }
    const intro = notice(mention, ' subscribed you to the following channels:');
    const links = sorted.map((channel) => channelLink(channel));
    poster.postDirect(userId, {
      markdown: `${intro.markdown}\n\n${links.map((link) => `* ${link.markdown}`).join('\n')}\n`,
      html: `${intro.html}\n<ul>\n${links.map((link) => `<li>${link.html}</li>`).join('\n')}\n</ul>`,
    });
  }
  return { changes: [...out, ...poster.changes], sent: true };
}
