import type { RealmChange } from '../changes.ts';
import type { Clock } from '../decide.ts';
import type { MessageCommand } from '../messages/commands.ts';
import type { MoveEdit } from '../messages/changes.ts';
import type { RealmState } from '../state.ts';
import { BotPoster, channelLink, notice, silentMention, subscribersAfter } from './decide.ts';
import { newNotificationBot } from './state.ts';

type Edit = Extract<MessageCommand, { type: 'message.edit' }>;

/**
 * PATCH /messages/{id} moves: the notification bot tells the old thread where the messages went and the
 * new thread where they came from, as the original words it, when the editor asked for it. Resolving or
 * unresolving a topic is announced by neither (level 152). Needing the bot brings it into being, in the
 * same record.
 */
export function moveNotices(state: RealmState, command: Edit, changes: RealmChange[], clock: Clock): RealmChange[] {
  const edited = changes.find((change) => change.type === 'message.edited');
  const move: MoveEdit | undefined = edited?.type === 'message.edited' ? edited.move : undefined;
  const notifyOld = command.notifyOldThread ?? false;
  const notifyNew = command.notifyNewThread ?? true;
  if (!move || move.resolveOnly || (!notifyOld && !notifyNew) || command.caller.kind !== 'user') return changes;
  const editor = state.users.get(command.caller.userId);
  const from = state.channels.get(move.fromChannelId);
  const to = state.channels.get(move.toChannelId);
  if (!editor || !from || !to) return changes;
  let bot = state.notificationBot;
  const out = [...changes];
  if (!bot) {
    if (!command.botDomain) return changes;
    bot = newNotificationBot(state, command.botDomain, clock.now());
    out.unshift({ type: 'notification_bot.created', bot });
  }
  const count = edited?.type === 'message.edited' ? edited.messageIds.length : 0;
  const whole = edited?.type === 'message.edited' && edited.propagateMode === 'change_all';
  const what = whole ? 'This topic was' : count === 1 ? 'A message was' : `${count} messages were`;
  const by = silentMention(editor);
  const poster = new BotPoster(state, bot, clock);
  if (notifyOld) {
    const text = notice(`${what} moved ${whole ? 'to' : 'from this topic to'} `, channelLink(to, move.toTopic), ' by ', by, '.');
    poster.post(from.id, move.fromTopic, text, subscribersAfter(state, from.id, out));
  }
  if (notifyNew) {
    const text = notice(`${what} moved here from `, channelLink(from, move.fromTopic), ' by ', by, '.');
    poster.post(to.id, move.toTopic, text, subscribersAfter(state, to.id, out));
  }
  return [...out, ...poster.changes];
}
