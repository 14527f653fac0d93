import { avatar, h } from '../dom.ts';
import type { Model } from '../model.ts';
import type { Conversation, Narrow } from '../narrow.ts';

export interface OverviewActions {
  open(narrow: Narrow): void;
}

/** Conversations listed by the recent view at most. */
const RECENT_SHOWN = 100;

/** A conversation's name: `#general › lunch`, or the people of a direct conversation. */
export function conversationLabel(model: Model, narrow: Conversation): string {
  if (narrow.kind === 'channel') return `#${model.subscriptions.get(narrow.streamId)?.name ?? 'unknown'} › ${narrow.topic || 'general chat'}`;
  return narrow.userIds.length ? narrow.userIds.map((id) => model.userName(id)).join(', ') : `${model.me.fullName} (you)`;
}

/**
 * Lists of conversations instead of messages: the inbox (every conversation with unread messages, by
 * channel, then direct ones) and the recent conversations (latest first, with who wrote and when).
 */
export class Overview {
  readonly element = h('div', { class: 'overview', hidden: true });

  constructor(private readonly actions: OverviewActions) {}

  render(model: Model, kind: 'inbox' | 'recent', state: { loading?: boolean; error?: string } = {}): void {
    if (state.loading) return void this.element.replaceChildren(h('p', { class: 'feed-note', role: 'status' }, 'Loading conversations…'));
    if (state.error) return void this.element.replaceChildren(h('p', { class: 'feed-note error', role: 'alert' }, state.error));
    this.element.replaceChildren(kind === 'inbox' ? this.inbox(model) : this.recent(model));
  }

  /** A row whose button holds only its label; the rest is drawn beside it and said by the button's name. */
  private row(model: Model, narrow: Conversation, count: number, extra: (Node | null)[] = []): HTMLElement {
    const label = narrow.kind === 'channel' ? narrow.topic || 'general chat' : conversationLabel(model, narrow);
    return h('li', { class: 'overview-item' }, h('button', {
      type: 'button',
      class: 'overview-row',
      'aria-label': `Open ${conversationLabel(model, narrow)}${count ? `, ${count} unread` : ''}`,
      onclick: () => this.actions.open(narrow),
    }, h('span', { class: 'overview-label' }, label)), h('span', { class: 'overview-beside', 'aria-hidden': 'true' }, ...extra, count ? h('span', { class: 'badge' }, String(count)) : null));
  }

  private inbox(model: Model): HTMLElement {
    const conversations = model.unreadConversations();
    if (!conversations.length) return h('div', { class: 'feed-empty' }, h('p', {}, 'You have no unread messages.'));
    const sections: HTMLElement[] = [];
    const channels = model.channels().filter((sub) => conversations.some((c) => c.narrow.kind === 'channel' && c.narrow.streamId === sub.stream_id));
    for (const sub of channels) {
      const topics = conversations.filter((c) => c.narrow.kind === 'channel' && c.narrow.streamId === sub.stream_id).sort((a, b) => b.lastId - a.lastId);
      const total = topics.reduce((sum, topic) => sum + topic.count, 0);
      sections.push(h('section', { class: 'overview-group', 'aria-label': `#${sub.name}, ${total} unread` },
        h('h2', {}, h('span', { class: 'channel-mark', style: `--channel: ${sub.color}`, 'aria-hidden': 'true' }, sub.invite_only ? '🔒' : '#'), sub.name, h('span', { class: 'badge muted', 'aria-hidden': 'true' }, String(total))),
        h('ul', {}, topics.map((topic) => this.row(model, topic.narrow, topic.count)))));
    }
    const direct = conversations.filter((c) => c.narrow.kind === 'dm').sort((a, b) => b.lastId - a.lastId);
    if (direct.length) {
      sections.unshift(h('section', { class: 'overview-group', 'aria-label': 'Direct messages' },
        h('h2', {}, 'Direct messages'),
        h('ul', {}, direct.map((c) => this.row(model, c.narrow, c.count)))));
    }
    return h('div', { class: 'overview-list' }, sections);
  }

  private recent(model: Model): HTMLElement {
    const recent = [...model.recent.values()]
      .filter((entry) => entry.narrow.kind === 'dm' || model.subscriptions.has(entry.narrow.streamId))
      .sort((a, b) => b.lastId - a.lastId).slice(0, RECENT_SHOWN);
    if (!recent.length) return h('div', { class: 'feed-empty' }, h('p', {}, 'No conversations yet.'));
    return h('div', { class: 'overview-list' }, h('ul', { class: 'recent-list' }, recent.map((entry) => {
      const unread = entry.narrow.kind === 'channel' ? model.topicUnread(entry.narrow.streamId, entry.narrow.topic ?? '') : model.dmUnread(entry.narrow.userIds);
      const time = new Date(entry.timestamp * 1000);
      return this.row(model, entry.narrow, unread, [
        entry.narrow.kind === 'channel' ? h('span', { class: 'overview-channel' }, `#${model.subscriptions.get(entry.narrow.streamId)?.name ?? ''}`) : null,
        h('span', { class: 'overview-people', 'aria-hidden': 'true' }, entry.senders.slice(0, 4).map((id) => avatar(id, model.userName(id), 'small'))),
        h('time', { datetime: time.toISOString(), title: time.toLocaleString() }, relativeTime(entry.timestamp)),
      ]);
    })));
  }
}

function relativeTime(timestamp: number): string {
  const seconds = Date.now() / 1000 - timestamp;
  if (seconds < 60) return 'just now';
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ago`;
  return new Date(timestamp * 1000).toLocaleDateString([], { month: 'short', day: 'numeric' });
}
