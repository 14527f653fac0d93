import { Api, type Credentials, type Json } from './api.ts';
import { h } from './dom.ts';
import { EventQueue, type Connection } from './events.ts';
import { icon } from './icons.ts';
import { Model, type Changed } from './model.ts';
import { apiNarrow, isConversation, isListing, isOverview, messageFromHash, messageLink, narrowFromHash, narrowToHash, sameNarrow, type Message, type Narrow } from './narrow.ts';
import { Compose } from './views/compose.ts';
import { EmojiPicker } from './views/emoji-picker.ts';
import { renderContent } from './views/content.ts';
import { Feed } from './views/feed.ts';
import { showDialog } from './views/dialog.ts';
import { Overview } from './views/overview.ts';
import { TopicTools } from './views/topic-tools.ts';
import { showUserCard } from './views/user-card.ts';
import { newConversation } from './views/new-conversation.ts';
import { listenForShortcuts } from './shortcuts.ts';
import { Sidebar } from './views/sidebar.ts';
import { UploadFiles } from './uploads.ts';
import { Notifier } from './notifications.ts';

/** How many messages a narrow opens with, before its first unread one (and as many after). */
const FEED_SIZE = 100;

/** The latest messages read for the recent-conversations view: Zulip's web app starts from about as many. */
const RECENT_MESSAGES = 1_000;

const VIEW_TITLES = { starred: 'Starred messages', inbox: 'Inbox', recent: 'Recent conversations' };
const VIEW_SUBTITLES = { starred: 'Messages you starred, newest last', inbox: 'Conversations with unread messages', recent: 'Where people wrote lately' };

/** How often the page tells the server its user is here: Zulip's web app's ACTIVE_PING_INTERVAL_MS. */
const PRESENCE_PING_MS = 50_000;

const SCHEMES = ['', 'auto', 'dark', 'light'] as const;
const SCHEME_NAMES: Record<string, string> = { auto: 'automatic', dark: 'dark', light: 'light' };

/** The signed-in client: the event queue feeds the model, and the views are redrawn from it. */
export class ChatApp {
  private readonly api: Api;
  private readonly model = new Model();
  private readonly queue: EventQueue;
  private readonly sidebar: Sidebar;
  private readonly feed: Feed;
  private readonly compose: Compose;
  private readonly overview: Overview;
  private readonly topicTools: TopicTools;
  private readonly uploads: UploadFiles;
  private readonly picker: EmojiPicker;
  private readonly notifier: Notifier;
  private readonly notifyButton = h('button', { type: 'button', class: 'ghost small notify-ask', hidden: true }, 'Turn on desktop notifications');
  private readonly title = h('h1', { class: 'pane-title' });
  private readonly subtitle = h('div', { class: 'pane-subtitle' });
  private readonly typing = h('div', { class: 'typing', 'aria-live': 'polite' });
  private readonly banner = h('div', { class: 'banner', role: 'status', hidden: true });
  private readonly search = h('input', { type: 'search', class: 'search-box', 'aria-label': 'Search messages', placeholder: 'Search: words, from:, channel:, topic:, has:', title: 'from:email channel:name topic:name has:link|image|attachment|reaction is:starred|mentioned|unread, and words' });
  private readonly connection = h('span', { class: 'connection', role: 'status' });
  private readonly themeButton = h('button', { type: 'button', class: 'ghost icon', onclick: () => this.cycleScheme() });
  private narrow: Narrow | null = null;
  /** the latest feed request; answers to older ones are dropped */
  private feedRequest = 0;
  /** a fetch of earlier messages is under way */
  private loadingOlder = false;
  private loadingNewer = false;
  private started = false;
  private typingTimer: ReturnType<typeof setInterval> | undefined;
  private presenceTimer: ReturnType<typeof setInterval> | undefined;
  private stopShortcuts: () => void = () => {};

  constructor(
    private readonly root: HTMLElement,
    credentials: Credentials,
    private readonly signedOut: (reason: string) => void,
  ) {
    this.api = new Api(credentials);
    this.uploads = new UploadFiles(this.api);
    this.notifier = new Notifier(this.model, (narrow) => this.select(narrow));
    this.notifyButton.addEventListener('click', () => void this.notifier.ask().then(() => (this.notifyButton.hidden = !this.notifier.canAsk)));
    this.picker = new EmojiPicker(this.model.emoji, () => this.model.emojiDataUrl);
    this.sidebar = new Sidebar({
      select: (narrow) => this.select(narrow),
      joinChannel: (name) => this.joinChannel(name),
      signOut: () => this.signOut(''),
      newConversation: () => void newConversation(this.model, (narrow) => this.select(narrow)),
      openSettings: () => void this.openSettings(),
      openScheduled: () => void import('./views/compose-extras.ts').then(({ showScheduled }) => showScheduled(this.api, this.model)),
    });
    this.feed = new Feed({
      toggleReaction: (message, reaction) => this.toggleReaction(message, reaction),
      pickReaction: (message, anchor) => this.picker.open(anchor, (choice) => this.toggleReaction(message, { emoji_name: choice.name, emoji_code: choice.code, reaction_type: choice.type })),
      rawContent: async (message) => (await this.api.get(`/messages/${message.id}`, { apply_markdown: false })).raw_content,
      saveEdit: async (message, content) => void (await this.api.patch(`/messages/${message.id}`, { content })),
      remove: async (message) => void (await this.api.delete(`/messages/${message.id}`)),
      selectTopic: (streamId, topic) => this.select({ kind: 'channel', streamId, topic }),
      open: (narrow) => this.select(narrow),
      uploads: this.uploads,
      reachedTop: () => void this.loadOlder(),
      reachedBottom: () => void this.loadNewer(),
      seen: () => this.markRead(),
      toggleStar: (message) => this.toggleStar(message),
      showHistory: (message) => void this.showHistory(message),
      showUser: (userId) => void showUserCard(this.model, userId, (narrow) => this.select(narrow)),
      linkTo: (message) => messageLink(message, this.model.me.userId, this.model.subscriptions.get(message.stream_id ?? -1)?.name ?? ''),
    });
    this.topicTools = new TopicTools(this.api, this.model, (narrow) => this.select(narrow, false));
    this.overview = new Overview({ open: (narrow) => this.select(narrow) });
    this.compose = new Compose(this.api, this.model, this.picker);
    this.queue = new EventQueue(this.api, {
      registered: (state) => this.registered(state),
      events: (events) => this.onEvents(events),
      unauthorized: () => this.signOut('Your session has ended. Sign in again.'),
      connection: (connection) => this.showConnection(connection),
    });
  }

  start(): void {
    this.root.replaceChildren(h('div', { class: 'splash', role: 'status' }, 'Loading…'));
    this.queue.start();
    addEventListener('hashchange', this.onHash);
    document.addEventListener('visibilitychange', this.markRead);
    addEventListener('focus', this.markRead);
    // Typing notices whose stop never came fade out on their own.
    this.typingTimer = setInterval(() => this.renderTyping(), 1_000);
    this.stopShortcuts = listenForShortcuts({
      search: () => this.search.focus(),
      newTopic: () => this.newTopic(),
      newDirect: () => void newConversation(this.model, (narrow) => this.select(narrow)),
      nextUnreadTopic: () => this.nextUnread('channel'),
      nextUnreadDirect: () => this.nextUnread('dm'),
      inbox: () => this.select({ kind: 'inbox' }, false),
      recent: () => this.select({ kind: 'recent' }, false),
      starred: () => this.select({ kind: 'starred' }, false),
    });
    this.reportPresence();
    this.presenceTimer = setInterval(() => {
      this.reportPresence();
      // Others' dots fade to idle and offline as their reports age.
      this.sidebar.update(this.model, this.narrow);
    }, PRESENCE_PING_MS);
  }

  /** The settings page is a chunk of its own, fetched the first time someone opens it. */
  private async openSettings(): Promise<void> {
    const { showSettings } = await import('./views/settings.ts');
    await showSettings(this.api, this.model);
  }

  /** `c`: a new topic in the channel on screen (or the first one), with the topic field to fill. */
  private newTopic(): void {
    const narrow = this.narrow;
    const streamId = narrow?.kind === 'channel' ? narrow.streamId : this.model.channels()[0]?.stream_id;
    if (streamId === undefined) return;
    this.select({ kind: 'channel', streamId });
    this.compose.focus();
  }

  /** `n` and `p`: the conversation with the oldest unread message, after the one on screen. */
  private nextUnread(kind: 'channel' | 'dm'): void {
    const here = this.narrow && isConversation(this.narrow) ? this.narrow : null;
    const candidates = this.model.unreadConversations()
      .filter((conversation) => conversation.narrow.kind === kind && !sameNarrow(conversation.narrow, here))
      .sort((a, b) => a.lastId - b.lastId);
    const next = candidates[0];
    if (next) this.select(next.narrow);
  }

  /** Active while the page is in view, idle while it is hidden. */
  private reportPresence(): void {
    const status = document.visibilityState === 'visible' ? 'active' : 'idle';
    void this.api.post('/users/me/presence', { status, ping_only: true, new_user_input: status === 'active' }).catch(() => {});
  }

  private registered(state: Json): void {
    this.model.load(state);
    void this.model.emoji.load(this.model.emojiDataUrl);
    this.applyScheme();
    if (!this.started) {
      this.started = true;
      this.layout();
    }
    this.compose.updateSettings();
    this.notifyButton.hidden = !this.notifier.canAsk;
    const link = messageFromHash(location.hash, this.model.me.userId);
    const wanted = link?.narrow ?? narrowFromHash(location.hash) ?? this.narrow ?? this.defaultNarrow();
    this.narrow = null;
    this.select(wanted, false, link?.near);
  }

  private layout(): void {
    const header = h('header', { class: 'pane-header' }, h('div', { class: 'pane-heading' }, this.title, this.subtitle), this.topicTools.element,
      h('form', { class: 'search', role: 'search', onsubmit: (event: Event) => this.onSearch(event) }, this.search), this.connection, this.themeButton);
    const pane = h('main', { class: 'pane', 'aria-label': 'Conversation' }, header, this.banner, this.notifyButton, this.feed.element, this.overview.element, this.typing, this.compose.element);
    this.compose.acceptDrops(pane);
    this.root.replaceChildren(h('div', { class: 'app' }, this.sidebar.element, pane));
  }

  /** The first channel with unread messages, else the first channel, else one's own notes. */
  private defaultNarrow(): Narrow {
    const channels = this.model.channels();
    const first = channels.find((sub) => this.model.channelUnread(sub.stream_id) > 0) ?? channels[0];
    return first ? { kind: 'channel', streamId: first.stream_id } : { kind: 'dm', userIds: [] };
  }

  private readonly onHash = () => {
    const link = messageFromHash(location.hash, this.model.me.userId);
    if (link) return this.select(link.narrow, false, link.near);
    const narrow = narrowFromHash(location.hash);
    if (narrow && !sameNarrow(narrow, this.narrow)) this.select(narrow, false);
  };

  /** Shows a narrow; `near`, a message to open at (a message link), else its first unread message. */
  select(narrow: Narrow, focus = true, near?: number): void {
    if (narrow.kind === 'channel' && !this.model.subscriptions.has(narrow.streamId)) narrow = this.defaultNarrow();
    const changed = !sameNarrow(narrow, this.narrow) || near !== undefined;
    this.narrow = narrow;
    if (location.hash !== narrowToHash(narrow)) history.replaceState(null, '', narrowToHash(narrow));
    this.model.setFeed(narrow, changed ? [] : this.model.feed, !changed && this.model.foundOldest, changed || this.model.foundNewest);
    // Search results and starred messages are read, not written to; the overviews are no feed at all.
    this.compose.element.hidden = !isConversation(narrow);
    if (isConversation(narrow)) this.compose.setNarrow(narrow);
    if (narrow.kind !== 'search') this.search.value = '';
    this.feed.element.hidden = isOverview(narrow);
    this.typing.hidden = !isConversation(narrow);
    this.overview.element.hidden = !isOverview(narrow);
    this.renderHeader();
    this.topicTools.update(narrow);
    this.sidebar.update(this.model, narrow);
    if (narrow.kind === 'channel') void this.loadTopics(narrow.streamId);
    if (changed) this.feed.reset();
    if (narrow.kind === 'inbox') this.overview.render(this.model, 'inbox');
    else if (narrow.kind === 'recent') void this.loadRecent();
    else void this.loadFeed(narrow, near);
    if (focus && isConversation(narrow)) this.compose.focus();
  }

  private async loadRecent(): Promise<void> {
    const request = ++this.feedRequest;
    if (!this.model.recent.size) this.overview.render(this.model, 'recent', { loading: true });
    try {
      const answer = await this.api.get('/messages', { anchor: 'newest', num_before: RECENT_MESSAGES, num_after: 0, apply_markdown: false });
      if (request !== this.feedRequest) return;
      this.model.loadRecent(answer.messages as Message[]);
      this.overview.render(this.model, 'recent');
    } catch (error) {
      if (request === this.feedRequest) this.overview.render(this.model, 'recent', { error: (error as Error).message });
    }
  }

  private onSearch(event: Event): void {
    event.preventDefault();
    const query = this.search.value.trim();
    if (query) this.select({ kind: 'search', query }, false);
  }

  /**
   * A conversation opens at its first unread message, with what came before it above, as in Zulip; a link
   * opens at its message; listings open at their latest.
   */
  private async loadFeed(narrow: Narrow, near?: number): Promise<void> {
    const request = ++this.feedRequest;
    if (!this.model.feed.length) this.feed.render(this.model, { loading: true });
    const anchor = near ?? (isConversation(narrow) ? 'first_unread' : 'newest');
    this.model.loadingFeed(narrow);
    try {
      const answer = await this.api.get('/messages', { narrow: apiNarrow(narrow, this.model.me.userId), anchor, num_before: FEED_SIZE, num_after: anchor === 'newest' ? 0 : FEED_SIZE, apply_markdown: true });
      if (request !== this.feedRequest) return;
      this.model.setFeed(narrow, answer.messages as Message[], answer.found_oldest, answer.found_newest);
      const firstUnread = isConversation(narrow) ? this.model.feed.find((message) => this.model.unread.has(message.id)) : undefined;
      this.feed.render(this.model, near !== undefined ? { scrollTo: { id: near, highlight: true } } : firstUnread ? { scrollTo: { id: firstUnread.id, highlight: false } } : { toBottom: true });
      this.renderTyping();
      this.markRead();
    } catch (error) {
      this.model.feedFailed(narrow);
      if (request === this.feedRequest) this.feed.render(this.model, { error: (error as Error).message });
    }
  }

  /** The page of messages before the oldest shown, kept above the reader's place. */
  private async loadOlder(): Promise<void> {
    const narrow = this.narrow;
    const oldest = this.model.feed[0];
    if (!narrow || !oldest || this.model.foundOldest || this.loadingOlder) return;
    this.loadingOlder = true;
    const request = this.feedRequest;
    this.feed.render(this.model, { loadingOlder: true, prepended: true });
    try {
      const answer = await this.api.get('/messages', { narrow: apiNarrow(narrow, this.model.me.userId), anchor: oldest.id, include_anchor: false, num_before: FEED_SIZE, num_after: 0, apply_markdown: true });
      if (request !== this.feedRequest) return;
      this.model.prependFeed(answer.messages as Message[], answer.found_oldest);
    } catch {
      // scrolling up again tries again
    } finally {
      this.loadingOlder = false;
    }
    if (request !== this.feedRequest) return;
    this.feed.render(this.model, { prepended: true });
    this.markRead();
  }

  /** The page of messages after the latest shown, for a feed opened at an older message. */
  private async loadNewer(): Promise<void> {
    const narrow = this.narrow;
    const newest = this.model.feed.at(-1);
    if (!narrow || !newest || this.model.foundNewest || this.loadingNewer) return;
    this.loadingNewer = true;
    const request = this.feedRequest;
    this.feed.render(this.model, { loadingNewer: true });
    try {
      const answer = await this.api.get('/messages', { narrow: apiNarrow(narrow, this.model.me.userId), anchor: newest.id, include_anchor: false, num_before: 0, num_after: FEED_SIZE, apply_markdown: true });
      if (request !== this.feedRequest) return;
      this.model.appendFeed(answer.messages as Message[], answer.found_newest);
    } catch {
      // scrolling down again tries again
    } finally {
      this.loadingNewer = false;
    }
    if (request !== this.feedRequest) return;
    this.feed.render(this.model);
    this.markRead();
  }

  private async loadTopics(streamId: number): Promise<void> {
    if (this.model.topics.has(streamId)) return;
    try {
      const answer = await this.api.get(`/users/me/${streamId}/topics`);
      this.model.setTopics(streamId, answer.topics);
      this.sidebar.update(this.model, this.narrow);
    } catch {
      // the channel list still works without its topics
    }
  }

  private onEvents(events: Json[]): void {
    const all: Changed = {};
    for (const event of events) this.notifier.consider(event, this.narrow);
    for (const event of events) Object.assign(all, Object.fromEntries(Object.entries(this.model.apply(event)).filter(([, value]) => value)));
    if (all.settings) {
      this.applyScheme();
      this.compose.updateSettings();
    }
    if (all.sidebar || all.scheduled) {
      if (this.narrow?.kind === 'channel') void this.loadTopics(this.narrow.streamId);
      this.sidebar.update(this.model, this.narrow);
      this.renderHeader();
    }
    if (all.follow) this.select(all.follow, false);
    else if (isOverview(this.narrow) && (all.sidebar || all.feed)) this.overview.render(this.model, this.narrow.kind);
    else if (all.refetch && this.narrow) void this.loadFeed(this.narrow);
    else if (all.feed) {
      this.feed.render(this.model);
      this.markRead();
    }
    if (all.typing) this.renderTyping();
  }

  /** Messages are read as they come into view, while the page is in view. */
  private readonly markRead = () => {
    // Finding a message is not reading its conversation, as in Zulip.
    if (document.visibilityState !== 'visible' || !isConversation(this.narrow)) return;
    const ids = this.feed.seenIds().filter((id) => this.model.unread.has(id));
    if (!ids.length) return;
    for (const id of ids) this.model.unread.delete(id);
    this.sidebar.update(this.model, this.narrow);
    void this.api.post('/messages/flags', { op: 'add', flag: 'read', messages: ids }).catch(() => {});
  };

  private renderHeader(): void {
    const narrow = this.narrow;
    if (!narrow) return;
    if (narrow.kind === 'search') {
      this.title.textContent = 'Search results';
      this.subtitle.textContent = narrow.query;
    } else if (narrow.kind === 'starred' || narrow.kind === 'inbox' || narrow.kind === 'recent') {
      this.title.textContent = VIEW_TITLES[narrow.kind];
      this.subtitle.textContent = VIEW_SUBTITLES[narrow.kind];
    } else if (narrow.kind === 'dm') {
      const names = narrow.userIds.map((id) => this.model.userName(id));
      this.title.textContent = names.length ? names.join(', ') : `${this.model.me.fullName} (you)`;
      const count = narrow.userIds.length;
      this.subtitle.textContent = count === 0 ? 'Notes to yourself' : count === 1 ? this.model.users.get(narrow.userIds[0]!)?.email ?? '' : `${count + 1} people`;
    } else {
      const sub = this.model.subscriptions.get(narrow.streamId);
      this.title.replaceChildren(`#${sub?.name ?? ''}`, ...(narrow.topic !== undefined ? [h('span', { class: 'pane-topic' }, ` › ${narrow.topic || 'general chat'}`)] : []));
      renderContent(this.subtitle, sub?.rendered_description ?? '', { open: (target) => this.select(target) });
    }
    document.title = `${this.title.textContent} · ${this.model.realmName || 'Chat'}`;
  }

  /** A dot in the header says how events arrive; a banner says when they do not. */
  private showConnection(connection: Connection): void {
    const label = connection.state === 'live'
      ? `Connected by ${connection.transport === 'websocket' ? 'WebSocket' : 'long-polling'}`
      : connection.state === 'connecting' ? 'Connecting…' : 'Reconnecting…';
    this.connection.dataset.state = connection.state;
    this.connection.setAttribute('aria-label', label);
    this.connection.title = label;
    this.banner.hidden = connection.state !== 'reconnecting';
    this.banner.textContent = connection.state === 'reconnecting' ? `Cannot reach the server. Trying again in ${Math.max(1, Math.round(connection.retryInMs / 1000))} s…` : '';
  }

  private renderTyping(): void {
    const names = this.narrow ? this.model.typing(this.narrow) : [];
    const text = names.length === 0 ? '' : names.length === 1 ? `${names[0]} is typing…` : names.length === 2 ? `${names[0]} and ${names[1]} are typing…` : 'Several people are typing…';
    if (this.typing.textContent !== text) this.typing.textContent = text;
  }

  /** Every version of a message, oldest first: its text, and the topic moves between them. */
  private async showHistory(message: Message): Promise<void> {
    let history: Json[];
    try {
      history = (await this.api.get(`/messages/${message.id}/history`)).message_history;
    } catch (error) {
      return alert((error as Error).message);
    }
    const versions = history.map((version, index) => {
      const time = new Date(version.timestamp * 1000);
      const what = index === 0 ? 'Sent' : version.prev_topic !== undefined && version.prev_content === undefined ? `Moved from “${version.prev_topic}”` : 'Edited';
      return h('li', { class: 'history-version' },
        h('div', { class: 'history-meta' }, h('strong', {}, `${what} by ${this.model.userName(version.user_id)}`), ' ', h('time', { datetime: time.toISOString() }, time.toLocaleString())),
        version.prev_topic !== undefined && version.topic !== undefined ? h('div', { class: 'history-topic' }, `Topic: ${version.topic}`) : null,
        renderContent(h('div', { class: 'content' }), version.rendered_content ?? '', { open: (narrow) => this.select(narrow), uploads: this.uploads }));
    });
    await showDialog('Edit history', [h('ol', { class: 'history' }, versions)]);
  }

  private toggleStar(message: Message): void {
    const op = message.flags.includes('starred') ? 'remove' : 'add';
    void this.api.post('/messages/flags', { op, flag: 'starred', messages: [message.id] }).catch((error: Error) => alert(error.message));
  }

  private toggleReaction(message: Message, reaction: { emoji_name: string; emoji_code: string; reaction_type: string }): void {
    const mine = message.reactions.some((r) => r.user_id === this.model.me.userId && r.emoji_code === reaction.emoji_code && r.reaction_type === reaction.reaction_type);
    const call = mine ? this.api.delete : this.api.post;
    void call(`/messages/${message.id}/reactions`, reaction).catch((error: Error) => alert(error.message));
  }

  private async joinChannel(name: string): Promise<void> {
    await this.api.post('/users/me/subscriptions', { subscriptions: [{ name }] });
    // The subscription event follows; the channel opens once the model has it.
    const opened = () => [...this.model.subscriptions.values()].find((sub) => sub.name.toLowerCase() === name.toLowerCase());
    for (let tries = 0; tries < 50 && !opened(); tries++) await new Promise((resolve) => setTimeout(resolve, 100));
    const sub = opened();
    if (sub) this.select({ kind: 'channel', streamId: sub.stream_id });
  }

  private applyScheme(): void {
    const scheme = SCHEMES[this.model.settings.colorScheme] || 'auto';
    document.documentElement.dataset.theme = scheme;
    this.themeButton.replaceChildren(icon(scheme === 'dark' ? 'moon' : scheme === 'light' ? 'sun' : 'auto'));
    this.themeButton.setAttribute('aria-label', `Colour scheme: ${SCHEME_NAMES[scheme]}. Change it`);
    this.themeButton.title = `Colour scheme: ${SCHEME_NAMES[scheme]}`;
  }

  /** automatic → dark → light → automatic, saved to the user's settings (the event applies it). */
  private cycleScheme(): void {
    const next = (this.model.settings.colorScheme % 3) + 1;
    void this.api.patch('/settings', { color_scheme: next }).catch((error: Error) => alert(error.message));
  }

  private signOut(reason: string): void {
    this.queue.stop();
    this.uploads.clear();
    clearInterval(this.typingTimer);
    clearInterval(this.presenceTimer);
    this.stopShortcuts();
    removeEventListener('hashchange', this.onHash);
    removeEventListener('focus', this.markRead);
    document.removeEventListener('visibilitychange', this.markRead);
    this.signedOut(reason);
  }
}
