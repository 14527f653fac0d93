import { badRequest } from '../../errors.ts';
import { requireAdmin } from '../administer.ts';
import type { RealmChange } from '../changes.ts';
import type { Caller } from '../commands.ts';
import type { Clock } from '../decide.ts';
import { renderMessage } from '../messages/render.ts';
import { MAX_WELCOME_MESSAGE_LENGTH } from '../settings/state.ts';
import type { RealmState } from '../state.ts';
import { BotPoster } from './decide.ts';

export type WelcomeCommand =
  /**
   * POST /realm/test_welcome_bot_custom_message: an administrator previews a welcome text, sent to it in a
   * direct message by the notification bot, which stands in for the original's welcome bot (made beforehand
   * with notification_bot.ensure).
   */
  { type: 'welcome_message.test'; caller: Caller; text: string };

export function decideWelcome(state: RealmState, command: WelcomeCommand, clock: Clock): RealmChange[] {
  const admin = requireAdmin(state, command.caller);
  if (!admin) throw badRequest('An administrator sends the test message to itself');
  const text = command.text.trim();
  if (text.length === 0) throw badRequest('Message must not be empty');
  if (text.length > MAX_WELCOME_MESSAGE_LENGTH) throw badRequest(`welcome_message_custom_text is too long (limit: ${MAX_WELCOME_MESSAGE_LENGTH} characters)`);
  const bot = state.notificationBot;
  if (!bot) throw badRequest('The notification bot is missing');
  const poster = new BotPoster(state, bot, clock);
  poster.postDirect(admin.userId, { markdown: text, html: renderMessage(state, bot.userId, text).html });
  return poster.changes;
}
