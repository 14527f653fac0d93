import { avatar, h, timeOfDay } from '../dom.ts';
import { glyphOf } from '../emoji.ts';
import type { Model, Presence } from '../model.ts';
import type { Narrow } from '../narrow.ts';
import { showDialog } from './dialog.ts';

const ROLES: Record<number, string> = { 100: 'Owner', 200: 'Administrator', 300: 'Moderator', 400: 'Member', 600: 'Guest' };

export const PRESENCE_WORDS: Record<Presence, string> = { active: 'Active now', idle: 'Idle', offline: 'Offline' };

/**
 * A person's card: who they are (name, role, email), what they say (status), where they are in the day
 * (their local time) and whether they are here (presence), with a way to write to them.
 */
export async function showUserCard(model: Model, userId: number, open: (narrow: Narrow) => void): Promise<void> {
  const user = model.users.get(userId);
  if (!user) return;
  const presence = model.presenceOf(userId);
  const seen = model.lastSeen(userId);
  const status = model.statuses.get(userId);
  const statusEmoji = status?.emoji_code && status.reaction_type === 'unicode_emoji' ? glyphOf(status.emoji_code) : null;
  const rows: [string, string][] = [
    ['Role', user.is_bot ? 'Bot' : ROLES[user.role ?? 400] ?? 'Member'],
    ['Email', user.email],
    ...(user.timezone ? [['Local time', `${localTime(user.timezone)} (${user.timezone})`] as [string, string]] : []),
    ['Presence', presence === 'offline' && seen ? `Offline, last seen ${new Date(seen * 1000).toLocaleString()}` : PRESENCE_WORDS[presence]],
  ];
  const card = h('div', { class: 'user-card' },
    h('div', { class: 'user-card-head' },
      h('span', { class: 'user-card-avatar' }, avatar(userId, user.full_name), h('span', { class: `presence-dot ${presence}`, 'aria-hidden': 'true' })),
      h('div', {},
        h('div', { class: 'user-card-name' }, user.full_name),
        status?.status_text || statusEmoji ? h('div', { class: 'user-card-status' }, statusEmoji ? `${statusEmoji} ` : '', status?.status_text ?? '') : null)),
    h('dl', { class: 'user-card-facts' }, rows.flatMap(([term, value]) => [h('dt', {}, term), h('dd', {}, value)])));
  const self = userId === model.me.userId;
  const answer = await showDialog(user.full_name, [card], [{ label: self ? 'Write a note to yourself' : 'Send a direct message', value: 'dm', primary: true }]);
  if (answer === 'dm') open({ kind: 'dm', userIds: self ? [] : [userId] });
}

function localTime(zone: string): string {
  try {
    return timeOfDay(new Date(), zone);
  } catch {
    return 'unknown';
  }
}
