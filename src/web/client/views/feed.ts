import { avatar, clock, h, reconcile, timeOfDay, uploadedAvatars } from '../dom.ts';
import { icon } from '../icons.ts';
import type { Model } from '../model.ts';
import { dmPeers, isListing, narrowKey, narrowOf, type Message, type Narrow, type Reaction } from '../narrow.ts';
import { renderContent, type Uploads } from './content.ts';
import { emojiFace } from './emoji-picker.ts';
import { glyphOf } from '../emoji.ts';

export interface FeedActions {
  toggleReaction(message: Message, reaction: Pick<Reaction, 'emoji_name' | 'emoji_code' | 'reaction_type'>): void;
  /** the emoji picker, beside `anchor`, to react with any emoji */
  pickReaction(message: Message, anchor: HTMLElement): void;
  /** the message's Markdown source, for the editor */
  rawContent(message: Message): Promise<string>;
  saveEdit(message: Message, content: string): Promise<void>;
  remove(message: Message): Promise<void>;
  selectTopic(streamId: number, topic: string): void;
  /** a channel link or mention in a message */
  open(narrow: Narrow): void;
  uploads: Uploads;
  /** the reader scrolled near the top: earlier messages are wanted */
  reachedTop(): void;
  /** the reader scrolled near the bottom of a feed that does not reach the latest message */
  reachedBottom(): void;
  /** messages came into view (or the view moved): the ones seen may be marked read */
  seen(): void;
  toggleStar(message: Message): void;
  showHistory(message: Message): void;
  /** the person's card */
  showUser(userId: number): void;
  /** the message's link, `#narrow/.../near/ID` */
  linkTo(message: Message): string;
}

/** How near the top (px) the reader gets before earlier messages are fetched, so they are there in time. */
const FETCH_MARGIN = 600;

const EMPTY: Record<string, string> = { search: 'No messages match this search.', starred: 'No starred messages. Star a message to find it here.' };

const THUMBS_UP = { emoji_name: '+1', emoji_code: '1f44d', reaction_type: 'unicode_emoji' };

/** Messages by one sender within this long of each other share one header. */
const GROUP_SECONDS = 5 * 60;

interface Editing {
  raw: string | null;
  error: string;
}

type RenderOptions = { toBottom?: boolean; loading?: boolean; error?: string; loadingOlder?: boolean; prepended?: boolean; loadingNewer?: boolean; scrollTo?: { id: number; highlight: boolean } };

/** A message and what goes before it in the list. */
interface Row {
  message: Message;
  day: string;
  newDay: boolean;
  newPlace: boolean;
  newTopic: boolean;
  continued: boolean;
  place: Narrow;
}

/**
 * Messages drawn beyond the view on either side: enough for a fast flick of the wheel or a Page Up to land on
 * drawn messages, few enough that a long conversation keeps a light page (10,000 messages, ~150 nodes).
 */
const WINDOW_MARGIN = 40;
/** Rows assumed to fill a view before any is measured. */
const MIN_VIEW_ROWS = 20;
/** A row's height (px) before any has been measured: a message of one line with its header. */
const DEFAULT_ROW_HEIGHT = 56;

interface Cached {
  signature: string;
  node: HTMLElement;
}

/**
 * The message list. Each message's element is kept while what it shows is unchanged, and the list is
 * reconciled rather than rebuilt, so an open editor survives new messages arriving around it.
 */
export class Feed {
  readonly element = h('div', { class: 'feed', role: 'log', 'aria-label': 'Messages', 'aria-live': 'polite', tabindex: '0' });
  private readonly cache = new Map<string, Cached>();
  private readonly editing = new Map<number, Editing>();
  private lastModel: Model | null = null;
  private lastOptions: RenderOptions = {};
  private rows: Row[] = [];
  /** drawn rows' heights (px) by message id */
  private readonly heights = new Map<number, number>();
  private window = { start: 0, end: 0 };
  private readonly topSpacer = h('div', { class: 'feed-spacer', 'aria-hidden': 'true' });
  private readonly bottomSpacer = h('div', { class: 'feed-spacer', 'aria-hidden': 'true' });
  /** messages at least partly in view, by id */
  private readonly inView = new Map<number, Element>();
  private readonly observer: IntersectionObserver;
  private scrollPending = false;

  constructor(private readonly actions: FeedActions) {
    this.observer = new IntersectionObserver((entries) => {
      for (const entry of entries) {
        const id = Number((entry.target as HTMLElement).dataset.id);
        if (entry.isIntersecting) this.inView.set(id, entry.target);
        else this.inView.delete(id);
      }
      this.actions.seen();
    }, { root: this.element, threshold: [0, 0.5, 1] });
    this.element.addEventListener('scroll', () => {
      const el = this.element;
      if (el.scrollTop < FETCH_MARGIN) this.actions.reachedTop();
      if (el.scrollHeight - el.scrollTop - el.clientHeight < FETCH_MARGIN) this.actions.reachedBottom();
      this.afterFrame();
    }, { passive: true });
  }

  /** Once a frame at most: the window follows the view, and a message whose end came into view is read. */
  private afterFrame(): void {
    if (this.scrollPending) return;
    this.scrollPending = true;
    requestAnimationFrame(() => {
      this.scrollPending = false;
      this.shiftWindow();
      this.actions.seen();
    });
  }

  /**
   * The messages a reader has seen: those in view down to their end (or taller than the view and filling
   * it), so that a message only peeking in at the bottom is not taken as read.
   */
  seenIds(): number[] {
    const view = this.element.getBoundingClientRect();
    const ids: number[] = [];
    for (const [id, node] of this.inView) {
      const box = node.getBoundingClientRect();
      if (box.bottom <= view.bottom + 2 || (box.top <= view.top + 2 && box.height >= view.height)) ids.push(id);
    }
    return ids;
  }

  /**
   * Redraws; keeps the view at the bottom if it was there (or `toBottom`), else where the reader is. Only a
   * window of the messages is in the page: those in view and WINDOW_MARGIN on either side; spacers above
   * and below stand for the rest, as tall as they were when last drawn (or as the average, if never).
   */
  render(model: Model, options: RenderOptions = {}): void {
    this.lastModel = model;
    this.lastOptions = options;
    const el = this.element;
    const atBottom = !options.scrollTo && (options.toBottom || !options.prepended && model.foundNewest && el.scrollHeight - el.scrollTop - el.clientHeight < 48);
    this.rows = options.loading || options.error ? [] : this.layout(model);
    this.element.dataset.loaded = String(this.rows.length);
    const rows = this.rows;
    let around: number;
    if (options.scrollTo) around = Math.max(0, rows.findIndex((row) => row.message.id === options.scrollTo!.id));
    else if (atBottom) around = rows.length - 1;
    else around = this.firstVisible() ?? 0;
    this.draw(model, options, around, atBottom ? 'bottom' : options.scrollTo ? 'target' : 'anchor');
  }

  /** The messages of the feed with what goes before each (a day, a topic or a conversation heading). */
  private layout(model: Model): Row[] {
    const showTopics = model.narrow?.kind === 'channel' && model.narrow.topic === undefined;
    // Search results come from many conversations: each run of one is headed by where it is.
    const showPlaces = isListing(model.narrow);
    const rows: Row[] = [];
    let previous: Message | null = null;
    let previousDay = '';
    for (const message of model.feed) {
      const day = dayOf(message.timestamp);
      const newDay = !previous || previousDay !== day;
      const place = narrowOf(message, model.me.userId);
      const newPlace = showPlaces && (!previous || narrowKey(narrowOf(previous, model.me.userId)) !== narrowKey(place));
      const newTopic = showTopics && (!previous || previous.subject.toLowerCase() !== message.subject.toLowerCase());
      const continued = !newDay && !newTopic && !newPlace && previous !== null && previous.sender_id === message.sender_id && message.timestamp - previous.timestamp < GROUP_SECONDS;
      rows.push({ message, day, newDay, newPlace, newTopic, continued, place });
      previous = message;
      previousDay = day;
    }
    return rows;
  }

  /** Draws the window around row `around`; `keep` says what stays in place on screen. */
  private draw(model: Model, options: RenderOptions, around: number, keep: 'bottom' | 'target' | 'anchor'): void {
    const el = this.element;
    const rows = this.rows;
    // Measured before anything moves (the spacers below change first). By id: the anchor's element is rebuilt
    // when it joins a group with earlier messages just loaded.
    const anchor = keep === 'anchor' ? this.firstVisibleNode() : null;
    const anchorId = anchor?.dataset.id;
    const anchorOffset = anchor ? anchor.getBoundingClientRect().top : 0;
    const nodes: Node[] = [];
    const keepKeys = new Set<string>();
    const cached = (key: string, signature: string, build: () => HTMLElement) => {
      keepKeys.add(key);
      let entry = this.cache.get(key);
      if (!entry || entry.signature !== signature) {
        entry = { signature, node: build() };
        this.cache.set(key, entry);
      }
      nodes.push(entry.node);
      return entry.node;
    };

    if (options.loading) nodes.push(h('p', { class: 'feed-note' }, 'Loading messages…'));
    else if (options.error) nodes.push(h('p', { class: 'feed-note error', role: 'alert' }, options.error));
    else if (!model.feed.length) nodes.push(h('div', { class: 'feed-empty' }, h('div', { class: 'feed-empty-icon', 'aria-hidden': 'true' }, icon('chat', 40)), h('p', {}, EMPTY[model.narrow?.kind ?? ''] ?? 'No messages here yet. Say hello!')));

    if (rows.length) {
      if (model.foundOldest) cached('note:start', model.narrow?.kind ?? '', () => h('p', { class: 'feed-note feed-start' }, model.narrow?.kind === 'search' ? 'No earlier messages match.' : model.narrow?.kind === 'starred' ? 'No earlier starred messages.' : 'This is the beginning of the conversation.'));
      else if (options.loadingOlder) nodes.push(h('p', { class: 'feed-note', role: 'status' }, 'Loading earlier messages…'));
    }

    // The window: the rows a view holds from `around` (by the heights known), and a margin either side.
    const estimate = this.averageHeight();
    const heightOf = (row: Row) => this.heights.get(row.message.id) ?? estimate;
    let viewRows = 0;
    for (let i = Math.max(0, around), filled = 0; i < rows.length && filled < el.clientHeight; i++, viewRows++) filled += heightOf(rows[i]!);
    const start = Math.max(0, (keep === 'bottom' ? rows.length - Math.max(viewRows, MIN_VIEW_ROWS) : around - (keep === 'target' ? MIN_VIEW_ROWS : 0)) - WINDOW_MARGIN);
    const end = Math.min(rows.length, Math.max(around + 1, around + viewRows) + WINDOW_MARGIN);
    this.window = { start, end };
    let above = 0;
    for (let i = 0; i < start; i++) above += heightOf(rows[i]!);
    let below = 0;
    for (let i = end; i < rows.length; i++) below += heightOf(rows[i]!);
    this.topSpacer.style.height = `${above}px`;
    this.bottomSpacer.style.height = `${below}px`;
    if (rows.length) nodes.push(this.topSpacer);

    const firstNodes: HTMLElement[] = [];
    for (let i = start; i < end; i++) {
      const { message, day, newDay, newPlace, newTopic, continued, place } = rows[i]!;
      const before = nodes.length;
      if (newDay) cached(`day:${day}`, day, () => h('div', { class: 'day-divider', role: 'separator' }, h('span', {}, dayLabel(message.timestamp))));
      if (newPlace) {
        const label = placeLabel(model, message);
        cached(`place:${message.id}`, label, () =>
          h('button', { type: 'button', class: 'topic-bar', 'aria-label': `Open ${label}`, onclick: () => this.actions.open(place) }, h('span', { 'aria-hidden': 'true' }, '›'), label));
      }
      if (newTopic) {
        cached(`topic:${message.id}`, message.subject, () =>
          h('button', { type: 'button', class: 'topic-bar', 'aria-label': `Open topic ${message.subject || 'general chat'}`, onclick: () => this.actions.selectTopic(message.stream_id!, message.subject) },
            h('span', { 'aria-hidden': 'true' }, '›'), message.subject || 'general chat'));
      }
      const editing = this.editing.get(message.id);
      const signature = JSON.stringify([message.content, message.last_edit_timestamp, message.reactions, message.flags.includes('starred'), continued, model.userName(message.sender_id), clock.hour12, uploadedAvatars.get(message.sender_id), editing && (editing.raw === null ? 'loading' : `open:${editing.error}`)]);
      cached(`message:${message.id}`, signature, () => {
        const node = this.messageView(model, message, continued, editing);
        this.observer.observe(node);
        return node;
      });
      firstNodes.push(nodes[before] as HTMLElement);
    }
    if (rows.length) nodes.push(this.bottomSpacer);

    if (rows.length && !model.foundNewest) {
      nodes.push(h('p', { class: 'feed-note', role: options.loadingNewer ? 'status' : null }, options.loadingNewer ? 'Loading later messages…' : 'Later messages follow as you scroll down.'));
    }

    for (const [key, entry] of this.cache) {
      if (keepKeys.has(key)) continue;
      this.cache.delete(key);
      this.observer.unobserve(entry.node);
      this.inView.delete(Number(entry.node.dataset.id));
    }
    // What the reader is looking at stays where it is on screen, whatever is added or dropped around it.
    reconcile(el, nodes);
    // Each drawn row's height, from its first element to the next row's (so margins count).
    const tops = firstNodes.map((node) => node.getBoundingClientRect().top);
    tops.push(this.bottomSpacer.getBoundingClientRect().top);
    for (let i = start; i < end; i++) {
      const height = tops[i - start + 1]! - tops[i - start]!;
      if (height > 0) this.heights.set(rows[i]!.message.id, height);
    }

    const target = options.scrollTo && el.querySelector<HTMLElement>(`.msg[data-id="${options.scrollTo.id}"]`);
    if (keep === 'target' && target && options.scrollTo) {
      // A linked message is centred and marked; the first unread one starts the view, below what came before.
      target.scrollIntoView({ block: options.scrollTo.highlight ? 'center' : 'start' });
      if (!options.scrollTo.highlight) el.scrollTop -= 48;
      else {
        for (const old of el.querySelectorAll('.msg.target')) old.classList.remove('target');
        target.classList.add('target');
        target.setAttribute('aria-current', 'true');
      }
    } else if (keep === 'bottom') el.scrollTop = el.scrollHeight;
    else if (anchorId !== undefined) {
      const now = el.querySelector<HTMLElement>(`:scope > .msg[data-id="${anchorId}"]`);
      if (now) el.scrollTop += now.getBoundingClientRect().top - anchorOffset;
    }
    // A view that did not move (already at the top) sends no scroll event: the window is checked anyway.
    this.afterFrame();
  }

  private averageHeight(): number {
    if (!this.heights.size) return DEFAULT_ROW_HEIGHT;
    let sum = 0;
    for (const height of this.heights.values()) sum += height;
    return sum / this.heights.size;
  }

  /** The first drawn message in view (its end below the view's top, its start above the view's bottom). */
  private firstVisibleNode(): HTMLElement | null {
    const view = this.element.getBoundingClientRect();
    for (const node of this.element.querySelectorAll<HTMLElement>(':scope > .msg')) {
      const box = node.getBoundingClientRect();
      if (box.bottom > view.top) return box.top < view.bottom ? node : null;
    }
    return null;
  }

  /**
   * The row at the top of the view: a drawn message there, else (the reader jumped into a spacer) the row
   * the spacer's heights put there.
   */
  private firstVisible(): number | null {
    const node = this.firstVisibleNode();
    const view = this.element.getBoundingClientRect();
    if (node) {
      const id = Number(node.dataset.id);
      const index = this.rows.findIndex((row) => row.message.id === id);
      if (index >= 0) return index;
    }
    if (!this.rows.length || !this.topSpacer.isConnected) return null;
    const estimate = this.averageHeight();
    let y = view.top - this.topSpacer.getBoundingClientRect().top;
    for (let i = 0; i < this.rows.length; i++) {
      y -= this.heights.get(this.rows[i]!.message.id) ?? estimate;
      if (y < 0) return i;
    }
    return this.rows.length - 1;
  }

  /** On scroll: a new window once the view nears the drawn one's edge (and the feed goes on beyond it). */
  private shiftWindow(): void {
    const model = this.lastModel;
    if (!model || !this.rows.length) return;
    const first = this.firstVisible();
    if (first === null) return;
    const { start, end } = this.window;
    const nearTop = start > 0 && first - start < WINDOW_MARGIN / 2;
    const nearBottom = end < this.rows.length && end - first < WINDOW_MARGIN;
    if (nearTop || nearBottom) this.draw(model, { ...this.lastOptions, scrollTo: undefined, toBottom: false }, first, 'anchor');
  }

  /** Forgets open editors and cached elements (a new narrow). */
  reset(): void {
    this.editing.clear();
    this.heights.clear();
    this.rows = [];
    this.cache.clear();
    this.observer.disconnect();
    this.inView.clear();
    this.element.replaceChildren();
  }

  private rerender(): void {
    if (this.lastModel) this.render(this.lastModel);
  }

  private messageView(model: Model, message: Message, continued: boolean, editing: Editing | undefined): HTMLElement {
    const mine = message.sender_id === model.me.userId;
    const sender = model.userName(message.sender_id) || message.sender_full_name;
    const time = new Date(message.timestamp * 1000);
    const content = renderContent(h('div', { class: 'content' }), message.content, this.actions);
    // "(edited)" ends the last paragraph, where a reader looks for it, rather than taking a line of its own.
    if (message.last_edit_timestamp) {
      const last = content.lastElementChild?.tagName === 'P' ? content.lastElementChild : content;
      last.append(h('button', { type: 'button', class: 'edited', 'aria-label': 'Show edit history', title: `Edited ${new Date(message.last_edit_timestamp * 1000).toLocaleString()}: show the history`, onclick: () => this.actions.showHistory(message) }, '(edited)'));
    }
    const thumbs = message.reactions.some((r) => r.user_id === model.me.userId && r.emoji_code === THUMBS_UP.emoji_code);

    const starred = message.flags.includes('starred');
    const actions = h('div', { class: 'msg-actions', role: 'toolbar', 'aria-label': 'Message actions' },
      h('button', { type: 'button', class: 'icon', 'aria-label': 'Add reaction', title: 'Add reaction', onclick: (event: Event) => this.actions.pickReaction(message, event.currentTarget as HTMLElement) }, icon('smile')),
      h('button', { type: 'button', class: 'icon', 'aria-label': thumbs ? 'Remove thumbs up' : 'React with thumbs up', 'aria-pressed': String(thumbs), title: 'Thumbs up', onclick: () => this.actions.toggleReaction(message, THUMBS_UP) }, icon('thumbsUp')),
      h('button', { type: 'button', class: 'icon', 'aria-label': starred ? 'Unstar message' : 'Star message', 'aria-pressed': String(starred), title: starred ? 'Unstar' : 'Star', onclick: () => this.actions.toggleStar(message) }, icon('star')),
      h('button', { type: 'button', class: 'icon', 'aria-label': 'Copy link to message', title: 'Copy link', onclick: (event: Event) => void copyLink(event.currentTarget as HTMLElement, this.actions.linkTo(message)) }, icon('link')),
      mine && h('button', { type: 'button', class: 'icon', 'aria-label': 'Edit message', title: 'Edit', onclick: () => this.startEdit(message) }, icon('edit')),
      mine && h('button', { type: 'button', class: 'icon', 'aria-label': 'Delete message', title: 'Delete', onclick: () => this.remove(message) }, icon('trash')),
    );

    return h('article', { class: `msg${continued ? ' continued' : ''}${mine ? ' mine' : ''}`, 'data-id': message.id, 'aria-label': `${sender}, ${timeOfDay(time)}` },
      continued ? h('time', { class: 'msg-gutter-time', datetime: time.toISOString() }, shortTime(time)) : h('span', { class: 'msg-avatar', onclick: () => this.actions.showUser(message.sender_id) }, avatar(message.sender_id, sender)),
      h('div', { class: 'msg-body' },
        continued ? null : h('div', { class: 'msg-meta' },
          h('button', { type: 'button', class: 'sender', title: `About ${sender}`, onclick: () => this.actions.showUser(message.sender_id) }, sender),
          h('time', { datetime: time.toISOString(), title: time.toLocaleString() }, shortTime(time)),
          starred ? h('span', { class: 'starred-mark', role: 'img', 'aria-label': 'Starred' }, icon('star', 14)) : null),
        continued && starred ? h('span', { class: 'starred-mark continued', role: 'img', 'aria-label': 'Starred' }, icon('star', 14)) : null,
        editing ? this.editor(message, editing) : content,
        reactionsView(model, message, this.actions),
      ),
      editing ? null : actions,
    );
  }

  private editor(message: Message, editing: Editing): HTMLElement {
    if (editing.raw === null) return h('p', { class: 'feed-note' }, 'Loading…');
    const text = h('textarea', { class: 'edit-box', 'aria-label': 'Edit message', rows: Math.min(10, editing.raw.split('\n').length + 1) });
    text.value = editing.raw;
    // Kept as typed, so that a redraw of this message (a reaction arriving) does not lose the edit.
    text.addEventListener('input', () => (editing.raw = text.value));
    const save = async () => {
      try {
        await this.actions.saveEdit(message, text.value);
        this.editing.delete(message.id);
      } catch (error) {
        this.editing.set(message.id, { raw: text.value, error: (error as Error).message });
      }
      this.rerender();
    };
    const cancel = () => {
      this.editing.delete(message.id);
      this.rerender();
    };
    text.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') cancel();
      else if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        void save();
      }
    });
    queueMicrotask(() => {
      text.focus();
      text.setSelectionRange(text.value.length, text.value.length);
    });
    return h('div', { class: 'editor' }, text,
      editing.error ? h('p', { class: 'form-error', role: 'alert' }, editing.error) : null,
      h('div', { class: 'editor-buttons' },
        h('button', { type: 'button', class: 'primary small', 'aria-label': 'Save edit', onclick: save }, 'Save'),
        h('button', { type: 'button', class: 'ghost small', 'aria-label': 'Cancel edit', onclick: cancel }, 'Cancel')));
  }

  private async startEdit(message: Message): Promise<void> {
    this.editing.set(message.id, { raw: null, error: '' });
    this.rerender();
    try {
      this.editing.set(message.id, { raw: await this.actions.rawContent(message), error: '' });
    } catch (error) {
      this.editing.delete(message.id);
      alert((error as Error).message);
    }
    this.rerender();
  }

  private async remove(message: Message): Promise<void> {
    if (!confirm('Delete this message?')) return;
    try {
      await this.actions.remove(message);
    } catch (error) {
      alert((error as Error).message);
    }
  }
}

/** The link on the clipboard, said in the button's tooltip; where the clipboard is refused, a prompt shows it. */
async function copyLink(button: HTMLElement, hash: string): Promise<void> {
  const url = `${location.origin}${location.pathname}${hash}`;
  try {
    await navigator.clipboard.writeText(url);
    button.title = 'Link copied';
  } catch {
    prompt('Link to this message', url);
  }
}

function reactionsView(model: Model, message: Message, actions: FeedActions): HTMLElement | null {
  if (!message.reactions.length) return null;
  const groups = new Map<string, Reaction[]>();
  for (const reaction of message.reactions) {
    const key = `${reaction.reaction_type}:${reaction.emoji_code}`;
    groups.set(key, [...(groups.get(key) ?? []), reaction]);
  }
  return h('div', { class: 'reactions' }, [...groups.values()].map((reactions) => {
    const first = reactions[0]!;
    const mine = reactions.some((r) => r.user_id === model.me.userId);
    const who = reactions.map((r) => model.userName(r.user_id)).join(', ');
    return h('button', {
      type: 'button',
      class: `reaction${mine ? ' mine' : ''}`,
      'aria-pressed': String(mine),
      // The visible count is part of the name (a button's visible text must be, for those who click by voice).
      'aria-label': `${first.emoji_name}: ${reactions.length}, by ${who}; ${mine ? 'remove yours' : 'add yours'}`,
      title: who,
      onclick: () => actions.toggleReaction(message, first),
    }, h('span', { class: 'reaction-emoji', 'aria-hidden': 'true' }, reactionFace(model, first)), h('span', { class: 'reaction-count' }, reactions.length));
  }));
}

function reactionFace(model: Model, reaction: Pick<Reaction, 'emoji_code' | 'emoji_name' | 'reaction_type'>): Node {
  const custom = model.emoji.byCode(reaction.reaction_type, reaction.emoji_code);
  if (custom) return emojiFace(custom);
  return document.createTextNode(reaction.reaction_type === 'unicode_emoji' ? glyphOf(reaction.emoji_code) ?? `:${reaction.emoji_name}:` : `:${reaction.emoji_name}:`);
}

/** `#general › lunch`, or `Ada, Bob` for a direct conversation. */
function placeLabel(model: Model, message: Message): string {
  if (message.type === 'stream') return `#${model.subscriptions.get(message.stream_id!)?.name ?? String(message.display_recipient)} › ${message.subject || 'general chat'}`;
  const peers = dmPeers(message, model.me.userId);
  return peers.length ? `Direct messages with ${peers.map((id) => model.userName(id)).join(', ')}` : 'Notes to yourself';
}

const shortTime = (time: Date) => timeOfDay(time);

function dayOf(timestamp: number): string {
  const date = new Date(timestamp * 1000);
  return `${date.getFullYear()}-${date.getMonth() + 1}-${date.getDate()}`;
}

function dayLabel(timestamp: number): string {
  const day = dayOf(timestamp);
  const now = Date.now();
  if (day === dayOf(now / 1000)) return 'Today';
  if (day === dayOf(now / 1000 - 86_400)) return 'Yesterday';
  return new Date(timestamp * 1000).toLocaleDateString([], { weekday: 'long', month: 'long', day: 'numeric', year: 'numeric' });
}
