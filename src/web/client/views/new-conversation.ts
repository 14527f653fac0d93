import { avatar, h } from '../dom.ts';
import type { Model } from '../model.ts';
import type { Narrow } from '../narrow.ts';
import { showDialog } from './dialog.ts';

/** Chooses the people of a new direct conversation (one person) or group conversation (several), then opens it. */
export async function newConversation(model: Model, open: (narrow: Narrow) => void): Promise<void> {
  const people = model.people().filter((user) => user.user_id !== model.me.userId);
  const filter = h('input', { type: 'search', 'aria-label': 'Find people', placeholder: 'Find people' });
  const boxes = people.map((user) => {
    const box = h('input', { type: 'checkbox', value: user.user_id });
    const row = h('label', { class: 'person-choice' }, box, avatar(user.user_id, user.full_name, 'small'), h('span', {}, user.full_name), h('span', { class: 'person-email' }, user.email));
    return { user, box, row };
  });
  filter.addEventListener('input', () => {
    const words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
    for (const { user, row } of boxes) row.hidden = !words.every((word) => user.full_name.toLowerCase().includes(word) || user.email.toLowerCase().includes(word));
  });
  const answer = await showDialog('New conversation', [
    filter,
    h('div', { class: 'person-choices', role: 'group', 'aria-label': 'People' }, boxes.map((choice) => choice.row)),
  ], [{ label: 'Open conversation', value: 'open', primary: true }]);
  const chosen = boxes.filter((choice) => choice.box.checked).map((choice) => choice.user.user_id).sort((a, b) => a - b);
  if (answer === 'open' && chosen.length) open({ kind: 'dm', userIds: chosen });
}
