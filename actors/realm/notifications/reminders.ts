import { badRequest } from '../../errors.ts';
import { SERVER_LIMITS } from '../../register/realm-limits.ts';
import type { RealmChange } from '../changes.ts';
import type { Caller } from '../commands.ts';
import type { Clock } from '../decide.ts';
import { readableMessage } from '../messages/decide.ts';
import { renderMessage } from '../messages/render.ts';
import type { RealmState } from '../state.ts';
import { BotPoster } from './decide.ts';
import { unusedFence } from './report.ts';
import { newNotificationBot, senderProfile } from './state.ts';

export type ReminderCommand =
  /** POST /reminders needs the bot that will send it: made now if the realm has none yet */
  | { type: 'notification_bot.ensure'; caller: Caller; botDomain: string }
  /** a due reminder (Runtime.deliverScheduled): the bot sends its text to its owner */
  | { type: 'reminder.deliver'; userId: number; scheduledMessageId: number; content: string; renderedContent: string };

export function decideReminder(state: RealmState, command: ReminderCommand, clock: Clock): RealmChange[] {
  switch (command.type) {
    case 'notification_bot.ensure':
      return state.notificationBot ? [] : [{ type: 'notification_bot.created', bot: newNotificationBot(state, command.botDomain, clock.now()) }];
    case 'reminder.deliver': {
      const owner = state.users.get(command.userId);
      const bot = state.notificationBot;
      if (!owner?.isActive) throw badRequest('Account is deactivated');
      if (!bot) throw badRequest('The notification bot is missing');
      const poster = new BotPoster(state, bot, clock);
      poster.postDirect(owner.userId, { markdown: command.content, html: command.renderedContent }, { scheduledMessageId: command.scheduledMessageId, ownerId: owner.userId });
      return poster.changes;
    }
  }
}

/**
 * A reminder's text, written when it is set, as the original words it: which message, the note quoted, and
 * the message itself quoted under a fence its text cannot close. The message must be one the user may read.
 */
export function reminderText(state: RealmState, userId: number, messageId: number, note: string | undefined): { markdown: string; html: string } {
  const message = readableMessage(state, userId, messageId);
  const trimmedNote = note?.trim() ?? '';
  if (trimmedNote.length > SERVER_LIMITS.max_reminder_note_length) throw badRequest(`note is too long (limit: ${SERVER_LIMITS.max_reminder_note_length} characters)`);
  const sender = senderProfile(state, message.senderId);
  const mention = `@_**${sender?.fullName ?? 'Unknown user'}|${message.senderId}**`;
  let link: string;
  let where: string;
  if (message.recipient.kind === 'channel') {
    const channel = state.channels.get(message.recipient.channelId);
    const name = channel?.name ?? '';
    where = `#**${name}>${message.recipient.topic}@${message.id}**`;
    link = `#narrow/channel/${message.recipient.channelId}-${encodeURIComponent(name.replace(/ /g, '-'))}/topic/${encodeURIComponent(message.recipient.topic)}/near/${message.id}`;
  } else {
    where = 'the following direct message';
    link = `#narrow/dm/${message.recipient.userIds.join(',')}/near/${message.id}`;
  }
  let markdown = trimmedNote ? `You requested a reminder for ${where}. Note:\n> ${trimmedNote.replace(/\n/g, '\n> ')}` : `You requested a reminder for ${where}.`;
  markdown += `\n\n${mention} [said](${link}):\n`;
  const { content } = state.messages.bodies.of(message);
  const fence = unusedFence(content);
  markdown += `${fence}quote\n${content}\n${fence}`;
  return { markdown, html: renderMessage(state, userId, markdown).html };
}
