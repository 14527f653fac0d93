import { avatar, h } from '../dom.ts';
import { icon } from '../icons.ts';
import { PRESENCE_WORDS } from './user-card.ts';
import type { Model } from '../model.ts';
import { narrowKey, sameNarrow, type Narrow } from '../narrow.ts';

export interface SidebarActions {
  select(narrow: Narrow): void;
  joinChannel(name: string): Promise<void>;
  signOut(): void;
  newConversation(): void;
  openSettings(): void;
  openScheduled(): void;
}

// The count is in the item's accessible name ("Channel general, 2 unread"), so the badge is not read twice.
const badge = (count: number) => (count > 0 ? h('span', { class: 'badge', 'aria-hidden': 'true' }, count > 99 ? '99+' : count) : null);

/**
 * Channels with their unread counts, the topics of the open channel, and direct conversations. The shell
 * (and the channel form, which may hold half-typed text) stays; `update` redraws the lists.
 */
export class Sidebar {
  readonly element: HTMLElement;
  private readonly orgName = h('span', { class: 'org-name' });
  private readonly channelList = h('div', { class: 'nav-block' });
  private readonly peopleList = h('div', { class: 'nav-block' });
  private readonly viewList = h('div', { class: 'nav-block' });
  private readonly me = h('div', { class: 'me-who' });

  constructor(private readonly actions: SidebarActions) {
    this.element = h('aside', { class: 'sidebar', 'aria-label': 'Channels and conversations' },
      h('header', { class: 'org' }, h('span', { class: 'org-logo', 'aria-hidden': 'true' }, icon('logo', 20)), this.orgName),
      h('nav', { class: 'nav', 'aria-label': 'Conversations' },
        h('section', { 'aria-label': 'Views' }, this.viewList),
        h('section', { 'aria-labelledby': 'channels-heading' }, h('h2', { id: 'channels-heading' }, 'Channels'), this.channelList, joinForm(actions)),
        h('section', { 'aria-labelledby': 'people-heading' },
          h('div', { class: 'nav-heading' }, h('h2', { id: 'people-heading' }, 'Direct messages'),
            h('button', { type: 'button', class: 'icon', 'aria-label': 'New direct or group conversation', title: 'New conversation (x)', onclick: () => actions.newConversation() }, '+')),
          this.peopleList),
      ),
      h('footer', { class: 'me' }, this.me,
        h('button', { type: 'button', class: 'ghost small', onclick: () => actions.openSettings() }, 'Settings'),
        h('button', { type: 'button', class: 'ghost', 'aria-label': 'Sign out', onclick: () => actions.signOut() }, 'Sign out')),
    );
  }

  update(model: Model, narrow: Narrow | null): void {
    const focused = document.activeElement instanceof HTMLElement && this.element.contains(document.activeElement) ? document.activeElement.dataset.key : undefined;
    this.orgName.textContent = model.realmName || 'Chat';
    const openChannel = narrow?.kind === 'channel' ? narrow.streamId : null;
    // Only the label is inside the button; the marks, avatars and counts beside it are drawn over the row and
    // left out of its name, which says them in words ("Channel general, 2 unread"): a button's visible text
    // must be within its accessible name, for those who click by voice.
    const link: Link = (target, label, children, extraClass = '') => {
      const current = sameNarrow(narrow, target);
      const at = children.findIndex((child) => child instanceof HTMLElement && child.classList.contains('nav-label'));
      const [before, text, after] = [children.slice(0, at), children[at] ?? null, children.slice(at + 1)];
      for (const node of [...before, ...after]) if (node instanceof HTMLElement) node.setAttribute('aria-hidden', 'true');
      const button = h('button', {
        class: 'nav-item',
        type: 'button',
        'data-key': narrowKey(target),
        'aria-label': label,
        'aria-current': current ? 'page' : null,
        onclick: () => this.actions.select(target),
      }, text);
      return h('div', { class: `nav-row ${extraClass}${current ? ' current' : ''}` }, ...before, button, ...after);
    };

    const scheduled = model.scheduledByTime().length;
    const allUnread = model.unreadConversations().reduce((sum, conversation) => sum + conversation.count, 0);
    this.viewList.replaceChildren(h('ul', { class: 'nav-list' },
      h('li', {}, link({ kind: 'inbox' }, `Inbox${allUnread ? `, ${allUnread} unread` : ''}`, [h('span', { class: 'view-icon', 'aria-hidden': 'true' }, icon('inbox', 16)), h('span', { class: 'nav-label' }, 'Inbox'), badge(allUnread)], 'view')),
      h('li', {}, link({ kind: 'recent' }, 'Recent conversations', [h('span', { class: 'view-icon', 'aria-hidden': 'true' }, icon('clock', 16)), h('span', { class: 'nav-label' }, 'Recent conversations')], 'view')),
      h('li', {}, link({ kind: 'starred' }, 'Starred messages', [h('span', { class: 'view-icon', 'aria-hidden': 'true' }, icon('star', 16)), h('span', { class: 'nav-label' }, 'Starred messages')], 'view')),
      scheduled ? h('li', {}, h('div', { class: 'nav-row view' },
        h('span', { class: 'view-icon', 'aria-hidden': 'true' }, icon('clock', 16)),
        h('button', { type: 'button', class: 'nav-item', 'aria-label': `Scheduled messages, ${scheduled}`, onclick: () => this.actions.openScheduled() }, h('span', { class: 'nav-label' }, 'Scheduled messages')),
        h('span', { class: 'badge', 'aria-hidden': 'true' }, scheduled))) : null,
    ));

    const channels = model.channels().map((sub) => {
      const count = model.channelUnread(sub.stream_id);
      const item = h('li', {},
        link({ kind: 'channel', streamId: sub.stream_id }, `Channel ${sub.name}${count ? `, ${count} unread` : ''}`, [
          h('span', { class: 'channel-mark', style: `--channel: ${sub.color}`, 'aria-hidden': 'true' }, sub.invite_only ? '🔒' : '#'),
          h('span', { class: 'nav-label' }, sub.name),
          badge(count),
        ], 'channel'));
      if (sub.stream_id === openChannel) item.append(topicList(model, sub.stream_id, link));
      return item;
    });
    this.channelList.replaceChildren(channels.length ? h('ul', { class: 'nav-list' }, channels) : h('p', { class: 'nav-empty' }, 'No channels yet: create one below.'));

    const people = model.people().map((user) => {
      const peers = user.user_id === model.me.userId ? [] : [user.user_id];
      const count = model.dmUnread(peers);
      const name = user.user_id === model.me.userId ? `${user.full_name} (you)` : user.full_name;
      return h('li', {}, link({ kind: 'dm', userIds: peers }, `Direct messages with ${name}${count ? `, ${count} unread` : ''}`, [
        h('span', { class: 'nav-avatar', title: PRESENCE_WORDS[model.presenceOf(user.user_id)] }, avatar(user.user_id, user.full_name, 'small'), h('span', { class: `presence-dot ${model.presenceOf(user.user_id)}` })),
        h('span', { class: 'nav-label' }, name),
        badge(count),
      ], 'person'));
    });
    const groups = model.groupConversations(narrow).map((userIds) => {
      const count = model.dmUnread(userIds);
      const names = userIds.map((id) => model.userName(id)).join(', ');
      return h('li', {}, link({ kind: 'dm', userIds }, `Direct messages with ${names}${count ? `, ${count} unread` : ''}`, [
        h('span', { class: 'avatar avatar-small group', 'aria-hidden': 'true' }, String(userIds.length + 1)),
        h('span', { class: 'nav-label' }, names),
        badge(count),
      ], 'person'));
    });
    this.peopleList.replaceChildren(h('ul', { class: 'nav-list' }, people, groups));

    this.me.replaceChildren(avatar(model.me.userId, model.me.fullName, 'small'), h('span', { class: 'me-name', title: model.me.email }, model.me.fullName));
    if (focused) this.element.querySelector<HTMLElement>(`[data-key="${CSS.escape(focused)}"]`)?.focus();
  }
}

type Link = (target: Narrow, label: string, children: (Node | string | null)[], extraClass?: string) => HTMLElement;

function topicList(model: Model, streamId: number, link: Link): HTMLElement {
  const topics = model.topics.get(streamId);
  if (!topics) return h('p', { class: 'nav-empty topic' }, 'Loading topics…');
  if (!topics.length) return h('p', { class: 'nav-empty topic' }, 'No topics yet');
  return h('ul', { class: 'topic-list', 'aria-label': 'Topics' }, topics.map((topic) => {
    const count = model.topicUnread(streamId, topic.name);
    const name = topic.name || 'general chat';
    return h('li', {}, link({ kind: 'channel', streamId, topic: topic.name }, `Topic ${name}${count ? `, ${count} unread` : ''}`, [
      h('span', { class: 'nav-label' }, name),
      badge(count),
    ], 'topic'));
  }));
}

/** Creates a channel, or joins an existing one of that name. */
function joinForm(actions: SidebarActions): HTMLElement {
  const input = h('input', { type: 'text', class: 'join-input', placeholder: 'New channel…', 'aria-label': 'Channel name to create or join', maxlength: 60 });
  const error = h('p', { class: 'form-error small', role: 'alert' });
  return h('form', {
    class: 'join-form',
    onsubmit: async (event: Event) => {
      event.preventDefault();
      const name = input.value.trim();
      if (!name) return;
      error.textContent = '';
      try {
        await actions.joinChannel(name);
        input.value = '';
      } catch (failure) {
        error.textContent = (failure as Error).message;
      }
    },
  }, input, h('button', { type: 'submit', class: 'icon', 'aria-label': 'Create or join channel', title: 'Create or join channel' }, '+'), error);
}
