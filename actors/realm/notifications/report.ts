import { badRequest } from '../../errors.ts';
import type { Caller } from '../commands.ts';
import type { Clock } from '../decide.ts';
import { callerUser, readableMessage } from '../messages/decide.ts';
import { normalizeTopic } from '../messages/limits.ts';
import { renderMessage } from '../messages/render.ts';
import type { RealmChange } from '../changes.ts';
import type { RealmState } from '../state.ts';
import { BotPoster, subscribersAfter } from './decide.ts';
import { senderProfile } from './state.ts';

/** The original's reasons for a report, as its moderators read them. */
export const REPORT_REASONS = {
  spam: 'Spam',
  harassment: 'Harassment',
  inappropriate: 'Inappropriate content',
  norms: 'Violates community norms',
  other: 'Other reason',
} as const;
export type ReportType = keyof typeof REPORT_REASONS;

/** The original's limits: the reporter's notes, and the reported text quoted so that the notice stays a message. */
export const MAX_REPORT_DESCRIPTION_LENGTH = 1000;
const MAX_QUOTED_LENGTH = 10_000 - MAX_REPORT_DESCRIPTION_LENGTH - 500;

export interface ReportCommand {
  type: 'message.report';
  caller: Caller;
  messageId: number;
  reportType: ReportType;
  description: string;
}

const NO_CHANNEL = 'Moderation request channel must be specified to enable message reporting.';

/**
 * POST /messages/{id}/report: the notification bot posts the report to the realm's moderation request channel,
 * in a topic per reported user, quoting the message under a spoiler, as the original does.
 */
export function decideReport(state: RealmState, command: ReportCommand, clock: Clock): RealmChange[] {
  const reporter = callerUser(state, command.caller);
  const channelId = state.settings.moderation_request_channel_id;
  const channel = channelId === -1 ? undefined : state.channels.get(channelId);
  const bot = state.notificationBot;
  if (!channel || channel.isArchived || !bot) throw badRequest(NO_CHANNEL);
  const message = readableMessage(state, reporter.userId, command.messageId);
  if (command.reportType === 'other' && command.description.trim() === '') throw badRequest('An explanation is required.');
  if (command.description.length > MAX_REPORT_DESCRIPTION_LENGTH) {
    throw badRequest(`description is too long (limit: ${MAX_REPORT_DESCRIPTION_LENGTH} characters)`);
  }
  const reported = senderProfile(state, message.senderId)!;
  const mention = (userId: number) => `@_**${senderProfile(state, userId)?.fullName ?? 'Unknown user'}|${userId}**`;
  let header: string;
  if (message.recipient.kind === 'channel') {
    const where = state.channels.get(message.recipient.channelId)!;
    header = `${mention(reporter.userId)} reported #**${where.name}>${message.recipient.topic}@${message.id}** sent by ${mention(reported.userId)}.`;
  } else {
    const others = message.recipient.userIds.filter((id) => id !== reported.userId);
    header = others.length <= 1
      ? `${mention(reporter.userId)} reported a DM sent by ${mention(reported.userId)}.`
      : `${mention(reporter.userId)} reported a DM sent by ${mention(reported.userId)} to ${others.slice(0, -1).map(mention).join(', ')}, and ${mention(others.at(-1)!)}.`;
  }
  const { content } = state.messages.bodies.of(message);
  const quoted = content.length > MAX_QUOTED_LENGTH
    ? content.slice(0, MAX_QUOTED_LENGTH - '\n[message truncated]'.length) + '\n[message truncated]'
    : content;
  const fence = unusedFence(quoted);
  const markdown = `${header}\n- Reason: **${REPORT_REASONS[command.reportType]}**\n- Notes:\n\`\`\`quote\n${command.description}\n\`\`\`` +
    `\n${fence} spoiler **Message sent by ${mention(reported.userId)}**\n${quoted}\n${fence}\n`;
  const poster = new BotPoster(state, bot, clock);
  const topic = normalizeTopic(`${reported.fullName}'s moderation requests`);
  poster.post(channel.id, topic, { markdown, html: renderMessage(state, bot.userId, markdown).html }, subscribersAfter(state, channel.id, []));
  return poster.changes;
}

/** A backtick fence longer than any run of backticks in the text, so the quoted text cannot close it. */
export function unusedFence(text: string): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((run) => run[0].length));
  return '`'.repeat(Math.max(3, longest + 1));
}
