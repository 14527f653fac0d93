import { badRequest } from '../../errors.ts';
import { requireAdmin } from '../administer.ts';
import type { RealmChange } from '../changes.ts';
import type { Caller } from '../commands.ts';
import type { Clock } from '../decide.ts';
import { renderMessage } from '../messages/render.ts';
import { MAX_WELCOME_MESSAGE_LENGTH } from '../settings/state.ts';
import type { RealmState } from '../state.ts';
import { BotPoster } from './decide.ts';
import { newNotificationBot } from './state.ts';

export type WelcomeCommand =
  /**
   * POST /realm/test_welcome_bot_custom_message: an administrator previews a welcome text, sent to it in a
   * direct message by the notification bot, which stands in for the original's welcome bot (made in the
   * same record if the realm has none yet, so that a refused request changes nothing).
   */
  { type: 'welcome_message.test'; caller: Caller; text: string; botDomain: string };

export function decideWelcome(state: RealmState, command: WelcomeCommand, clock: Clock): RealmChange[] {
  const admin = requireAdmin(state, command.caller);
  if (!admin) throw badRequest('An administrator sends the test message to itself');
  const text = command.text.trim();
  if (text.length === 0) throw badRequest('Message must not be empty');
  if (text.length > MAX_WELCOME_MESSAGE_LENGTH) throw badRequest(`welcome_message_custom_text is too long (limit: ${MAX_WELCOME_MESSAGE_LENGTH} characters)`);
  const created = state.notificationBot ? [] : [newNotificationBot(state, command.botDomain, clock.now())];
  const bot = state.notificationBot ?? created[0]!;
  // Rendered as the bot will see the realm once made: channel links need it to be a member.
  const seen = created.length ? { ...state, users: new Map(state.users).set(bot.userId, bot) } : state;
  const poster = new BotPoster(state, bot, clock);
  poster.postDirect(admin.userId, { markdown: text, html: renderMessage(seen, bot.userId, text).html });
  return [...created.map((made): RealmChange => ({ type: 'notification_bot.created', bot: made })), ...poster.changes];
}
