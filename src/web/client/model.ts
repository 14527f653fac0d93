import type { Json } from './api.ts';
import { clock, noteAvatar, uploadedAvatars } from './dom.ts';
import { EmojiCatalog } from './emoji.ts';
import { matches, narrowKey, narrowOf, sameTopic, type Conversation, type Message, type Narrow } from './narrow.ts';

export interface User {
  user_id: number;
  full_name: string;
  email: string;
  is_active: boolean;
  is_bot: boolean;
  /** 100 owner, 200 administrator, 300 moderator, 400 member, 600 guest */
  role?: number;
  /** an IANA zone, or '' when the user has not said */
  timezone?: string;
  /** the picture's URL: the server's drawn default, an uploaded image, or null (not sent) */
  avatar_url?: string | null;
}

/** Someone whose client reported nothing for this long is offline: Zulip's OFFLINE_THRESHOLD_SECS. */
const OFFLINE_SECONDS = 140;
/** messages of a narrow being fetched kept to join its answer (a fetch asks for 100) */
const MAX_ARRIVED_WHILE_LOADING = 100;

export type Presence = 'active' | 'idle' | 'offline';

/** A message to be sent later (GET /scheduled_messages); `to` is a channel id or user ids. */
export interface ScheduledMessage {
  scheduled_message_id: number;
  type: 'stream' | 'private';
  to: number | number[];
  topic?: string;
  content: string;
  rendered_content: string;
  scheduled_delivery_timestamp: number;
  failed: boolean;
}

export interface Snippet {
  id: number;
  title: string;
  content: string;
  date_created: number;
}

export interface UserStatus {
  status_text?: string;
  emoji_name?: string;
  emoji_code?: string;
  reaction_type?: string;
}

export interface Subscription {
  stream_id: number;
  name: string;
  color: string;
  description: string;
  /** the description as HTML, rendered by the server */
  rendered_description: string;
  invite_only: boolean;
}

export interface Topic {
  name: string;
  maxId: number;
}

export interface Draft {
  id: number;
  type: 'stream' | 'private' | '';
  to: number[];
  topic: string;
  content: string;
  timestamp: number;
}

/** Where an unread message lives, to count it per channel, topic and conversation. */
interface UnreadPlace {
  streamId?: number;
  topic?: string;
  /** the conversation's narrow key */
  dm?: string;
}

interface Typist {
  userId: number;
  /** where they type: a topic or a conversation */
  narrow: Narrow;
  expiresAt: number;
}

/** A conversation of the recent-conversations view. */
export interface RecentConversation {
  narrow: Conversation;
  lastId: number;
  timestamp: number;
  /** who wrote in it lately, latest first */
  senders: number[];
}

/** Which parts of the page an event changed. */
export interface Changed {
  sidebar?: boolean;
  feed?: boolean;
  /** the feed must be fetched again (a message moved in or out of it) */
  refetch?: boolean;
  typing?: boolean;
  /** the user's settings (colour scheme, Enter sends) */
  settings?: boolean;
  drafts?: boolean;
  /** scheduled messages or saved snippets */
  scheduled?: boolean;
  /** the topic on screen moved as a whole: the page follows it there */
  follow?: Narrow;
}

/**
 * Everything the client knows: the registration state, kept current by the queue's events, and the
 * messages of the narrow on screen. Only this class changes it.
 */
export class Model {
  me = { userId: 0, email: '', fullName: '' };
  realmName = '';
  users = new Map<number, User>();
  subscriptions = new Map<number, Subscription>();
  /** the topics of channels whose list was fetched, most recent first */
  topics = new Map<number, Topic[]>();
  unread = new Map<number, UnreadPlace>();
  drafts = new Map<number, Draft>();
  /** messages waiting to be sent, by id */
  scheduled = new Map<number, ScheduledMessage>();
  snippets = new Map<number, Snippet>();
  readonly emoji = new EmojiCatalog();
  /** last reports by user id, in the server's seconds */
  presences = new Map<number, { active: number; idle: number }>();
  /** the server's clock minus ours, in seconds, to judge presence timestamps */
  clockSkew = 0;
  statuses = new Map<number, UserStatus>();
  /** where the server lists its Unicode emoji names, on this page's origin */
  emojiDataUrl = '/emoji-data.json';
  settings = { colorScheme: 1, enterSends: false, typingNotifications: true, desktopNotifications: true, directContentInNotifications: true };
  /** every personal setting as the server sent it (the settings page reads and shows them) */
  userSettings: Record<string, Json> = {};
  typingTimes = { startedWaitMs: 10_000, stoppedWaitMs: 5_000, startedExpiryMs: 15_000 };
  typists = new Map<string, Typist>();
  narrow: Narrow | null = null;
  /** the narrow's messages, oldest first */
  feed: Message[] = [];
  /** the feed reaches back to the narrow's first message */
  foundOldest = false;
  /** the feed reaches the narrow's latest message, so new ones join it (not so for a link to an old message) */
  foundNewest = true;
  /**
   * A narrow whose messages are being fetched, and its messages that arrived as events meanwhile: the answer
   * may have been made before they were sent, and until it comes `narrow` is still the one left.
   */
  private loading: { narrow: Narrow; arrived: Message[] } | null = null;
  /** conversations by narrow key, from one's latest messages and those arriving since */
  recent = new Map<string, RecentConversation>();

  /** Replaces everything with a registration's state. */
  load(state: Json): void {
    this.me = { userId: state.user_id, email: state.email, fullName: state.full_name };
    this.realmName = state.realm_name ?? '';
    this.users = new Map((state.realm_users as User[]).map((user) => [user.user_id, user]));
    // The system bots (the notification bot that announces resolved and moved topics) write messages too.
    for (const bot of (state.cross_realm_bots ?? []) as User[]) this.users.set(bot.user_id, { ...bot, is_active: true, is_bot: true });
    this.subscriptions = new Map((state.subscriptions as Subscription[]).map((sub) => [sub.stream_id, sub]));
    this.drafts = new Map((state.drafts as Draft[]).map((draft) => [draft.id, draft]));
    this.scheduled = new Map(((state.scheduled_messages ?? []) as ScheduledMessage[]).map((message) => [message.scheduled_message_id, message]));
    this.snippets = new Map(((state.saved_snippets ?? []) as Snippet[]).map((snippet) => [snippet.id, snippet]));
    this.emoji.setCustom(state.realm_emoji ?? {});
    this.presences = new Map(Object.entries(state.presences ?? {}).map(([id, entry]) => [Number(id), { active: (entry as Json).active_timestamp ?? 0, idle: (entry as Json).idle_timestamp ?? 0 }]));
    if (typeof state.server_timestamp === 'number') this.clockSkew = state.server_timestamp - Date.now() / 1000;
    this.statuses = new Map(Object.entries(state.user_status ?? {}).map(([id, status]) => [Number(id), status as UserStatus]));
    if (state.server_emoji_data_url) this.emojiDataUrl = new URL(state.server_emoji_data_url, location.origin).pathname;
    const settings = state.user_settings ?? {};
    this.userSettings = { ...settings };
    clock.hour12 = settings.twenty_four_hour_time === true ? false : undefined;
    uploadedAvatars.clear();
    for (const user of this.users.values()) noteAvatar(user);
    this.settings = {
      colorScheme: settings.color_scheme ?? 1,
      enterSends: settings.enter_sends ?? false,
      typingNotifications: settings.send_stream_typing_notifications ?? true,
      desktopNotifications: settings.enable_desktop_notifications ?? true,
      directContentInNotifications: settings.pm_content_in_desktop_notifications ?? true,
    };
    this.typingTimes = {
      startedWaitMs: state.server_typing_started_wait_period_milliseconds ?? 10_000,
      stoppedWaitMs: state.server_typing_stopped_wait_period_milliseconds ?? 5_000,
      startedExpiryMs: state.server_typing_started_expiry_period_milliseconds ?? 15_000,
    };
    this.unread.clear();
    const unread = state.unread_msgs ?? {};
    for (const entry of unread.streams ?? []) for (const id of entry.unread_message_ids) this.unread.set(id, { streamId: entry.stream_id, topic: entry.topic });
    for (const entry of unread.pms ?? []) {
      const peers = entry.other_user_id === this.me.userId ? [] : [entry.other_user_id];
      for (const id of entry.unread_message_ids) this.unread.set(id, { dm: narrowKey({ kind: 'dm', userIds: peers }) });
    }
    for (const entry of unread.huddles ?? []) {
      const peers = String(entry.user_ids_string).split(',').map(Number).filter((id) => id !== this.me.userId).sort((a, b) => a - b);
      for (const id of entry.unread_message_ids) this.unread.set(id, { dm: narrowKey({ kind: 'dm', userIds: peers }) });
    }
    this.topics.clear();
    this.typists.clear();
  }

  presenceOf(id: number, now = Date.now() / 1000 + this.clockSkew): Presence {
    const entry = this.presences.get(id);
    if (!entry) return 'offline';
    if (now - entry.active < OFFLINE_SECONDS) return 'active';
    return now - Math.max(entry.idle, entry.active) < OFFLINE_SECONDS ? 'idle' : 'offline';
  }

  /** When the user was last seen (server seconds), 0 if never. */
  lastSeen(id: number): number {
    const entry = this.presences.get(id);
    return entry ? Math.max(entry.active, entry.idle) : 0;
  }

  userName(id: number): string {
    return this.users.get(id)?.full_name ?? 'Unknown user';
  }

  /** Active people, for the direct-message list: oneself first, then by name. */
  people(): User[] {
    return [...this.users.values()]
      .filter((user) => user.is_active && !user.is_bot)
      .sort((a, b) => (a.user_id === this.me.userId ? -1 : b.user_id === this.me.userId ? 1 : a.full_name.localeCompare(b.full_name)));
  }

  /**
   * Group conversations worth listing: those with unread messages, and the one on screen (one-to-one
   * conversations are listed by person).
   */
  groupConversations(open: Narrow | null): number[][] {
    const keys = new Set<string>();
    for (const place of this.unread.values()) if (place.dm?.includes(',')) keys.add(place.dm);
    if (open?.kind === 'dm' && open.userIds.length > 1) keys.add(narrowKey(open));
    return [...keys].sort().map((key) => key.slice('dm:'.length).split(',').map(Number));
  }

  channels(): Subscription[] {
    return [...this.subscriptions.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  unreadCount(filter: (place: UnreadPlace) => boolean): number {
    let count = 0;
    for (const place of this.unread.values()) if (filter(place)) count++;
    return count;
  }

  channelUnread = (streamId: number) => this.unreadCount((place) => place.streamId === streamId);
  topicUnread = (streamId: number, topic: string) => this.unreadCount((place) => place.streamId === streamId && sameTopic(place.topic ?? '', topic));
  dmUnread = (userIds: number[]) => {
    const key = narrowKey({ kind: 'dm', userIds });
    return this.unreadCount((place) => place.dm === key);
  };

  setTopics(streamId: number, topics: { name: string; max_id: number }[]): void {
    this.topics.set(streamId, topics.map((topic) => ({ name: topic.name, maxId: topic.max_id })).sort((a, b) => b.maxId - a.maxId));
  }

  /** The draft kept for a narrow's compose box, if any. */
  draftFor(narrow: Conversation): Draft | undefined {
    for (const draft of this.drafts.values()) {
      if (narrow.kind === 'dm' && draft.type === 'private' && sortedKey(draft.to.filter((id) => id !== this.me.userId)) === narrow.userIds.join(',')) return draft;
      if (narrow.kind === 'channel' && draft.type === 'stream' && draft.to[0] === narrow.streamId && sameTopic(draft.topic, narrow.topic ?? '')) return draft;
    }
    return undefined;
  }

  /**
   * Others typing in a narrow (a channel's view includes all its topics), by name; expired notices (a stop
   * that never came) are dropped.
   */
  typing(narrow: Narrow, now = Date.now()): string[] {
    const names: string[] = [];
    for (const [id, typist] of this.typists) {
      if (typist.expiresAt <= now) this.typists.delete(id);
      else if (within(typist.narrow, narrow)) names.push(this.userName(typist.userId));
    }
    return names;
  }

  /** A fetch of `narrow`'s messages starts (the same object is then given to setFeed or feedFailed). */
  loadingFeed(narrow: Narrow): void {
    this.loading = { narrow, arrived: [] };
  }

  feedFailed(narrow: Narrow): void {
    if (this.loading?.narrow === narrow) this.loading = null;
  }

  setFeed(narrow: Narrow, messages: Message[], foundOldest = false, foundNewest = true): void {
    const arrived = this.loading?.narrow === narrow ? this.loading.arrived : [];
    this.loading = null;
    const newest = messages.at(-1)?.id ?? 0;
    // Events come in id order: those after the answer's newest are the ones it was made too early to hold.
    const later = foundNewest ? arrived.filter((message) => message.id > newest) : [];
    this.narrow = narrow;
    this.feed = later.length ? [...messages, ...later] : messages;
    this.foundOldest = foundOldest;
    this.foundNewest = foundNewest;
  }

  /** Later messages of the narrow, fetched as the reader scrolls down from an older message. */
  appendFeed(messages: Message[], foundNewest: boolean): void {
    const known = new Set(this.feed.map((message) => message.id));
    this.feed = [...this.feed, ...messages.filter((message) => !known.has(message.id))];
    this.foundNewest = foundNewest;
  }

  /** Unread messages by conversation, for the inbox: channels' topics first, then direct conversations. */
  unreadConversations(): { narrow: Conversation; count: number; lastId: number }[] {
    const found = new Map<string, { narrow: Conversation; count: number; lastId: number }>();
    for (const [id, place] of this.unread) {
      const narrow: Conversation = place.dm !== undefined
        ? { kind: 'dm', userIds: place.dm.slice('dm:'.length).split(',').filter(Boolean).map(Number) }
        : { kind: 'channel', streamId: place.streamId!, topic: place.topic ?? '' };
      const key = narrowKey(narrow);
      const entry = found.get(key) ?? { narrow, count: 0, lastId: 0 };
      entry.count++;
      entry.lastId = Math.max(entry.lastId, id);
      found.set(key, entry);
    }
    return [...found.values()].filter((entry) => entry.narrow.kind === 'dm' || this.subscriptions.has(entry.narrow.streamId));
  }

  /** One's latest messages, as the recent conversations they belong to. */
  loadRecent(messages: Message[]): void {
    this.recent.clear();
    for (const message of messages) this.noteRecent(message);
  }

  private noteRecent(message: Message): void {
    const narrow = narrowOf(message, this.me.userId);
    const key = narrowKey(narrow);
    const entry = this.recent.get(key);
    if (!entry) {
      this.recent.set(key, { narrow, lastId: message.id, timestamp: message.timestamp, senders: [message.sender_id] });
      return;
    }
    if (message.id > entry.lastId) {
      entry.lastId = message.id;
      entry.timestamp = message.timestamp;
      entry.senders = [message.sender_id, ...entry.senders.filter((id) => id !== message.sender_id)];
    } else if (!entry.senders.includes(message.sender_id)) entry.senders.push(message.sender_id);
  }

  /** Earlier messages of the narrow, fetched as the reader scrolls up. */
  prependFeed(messages: Message[], foundOldest: boolean): void {
    const known = new Set(this.feed.map((message) => message.id));
    this.feed = [...messages.filter((message) => !known.has(message.id)), ...this.feed];
    this.foundOldest = foundOldest;
  }

  apply(event: Json): Changed {
    switch (event.type) {
      case 'message': return this.addMessage({ ...event.message, flags: event.flags ?? [] });
      case 'update_message': return this.updateMessage(event);
      case 'delete_message': return this.deleteMessages(event.message_ids ?? [event.message_id]);
      case 'reaction': return this.react(event);
      case 'update_message_flags': return this.updateFlags(event);
      case 'typing': return this.typingEvent(event);
      case 'subscription': return this.subscriptionEvent(event);
      case 'stream': return this.streamEvent(event);
      case 'realm_user': return this.userEvent(event);
      case 'user_settings': return this.settingsEvent(event);
      case 'drafts': return this.draftsEvent(event);
      case 'scheduled_messages': return this.scheduledEvent(event);
      case 'saved_snippets': return this.snippetsEvent(event);
      case 'presence': return this.presenceEvent(event);
      case 'user_status': {
        const status = { ...this.statuses.get(event.user_id) };
        for (const field of ['status_text', 'emoji_name', 'emoji_code', 'reaction_type'] as const) if (event[field] !== undefined) status[field] = event[field];
        this.statuses.set(event.user_id, status);
        return { sidebar: true };
      }
      case 'realm_emoji':
        this.emoji.setCustom(event.realm_emoji);
        return { feed: true };
      case 'realm':
        if (event.op === 'update' && event.property === 'name') this.realmName = event.value;
        if (event.op === 'update_dict' && event.data?.name) this.realmName = event.data.name;
        return { sidebar: true };
      default: return {};
    }
  }

  private addMessage(message: Message): Changed {
    const me = this.me.userId;
    const changed: Changed = { sidebar: true };
    if (!message.flags.includes('read') && message.sender_id !== me) {
      this.unread.set(message.id, message.type === 'stream' ? { streamId: message.stream_id!, topic: message.subject } : { dm: narrowKey(narrowOf(message, me)) });
    }
    if (message.type === 'stream') {
      const topics = this.topics.get(message.stream_id!);
      if (topics) {
        const rest = topics.filter((topic) => !sameTopic(topic.name, message.subject));
        this.topics.set(message.stream_id!, [{ name: message.subject, maxId: message.id }, ...rest]);
      }
    }
    this.noteRecent(message);
    // Someone who sent a message has stopped typing it.
    this.typists.delete(`${narrowKey(narrowOf(message, me))}|${message.sender_id}`);
    if (this.loading && matches(this.loading.narrow, message, me)) {
      // Bounded as the feed a fetch shows: only the newest can join it.
      if (this.loading.arrived.push(message) > MAX_ARRIVED_WHILE_LOADING) this.loading.arrived.shift();
    }
    if (this.narrow && this.foundNewest && matches(this.narrow, message, me) && !this.feed.some((known) => known.id === message.id)) {
      this.feed.push(message);
      changed.feed = true;
      changed.typing = true;
    }
    return changed;
  }

  private updateMessage(event: Json): Changed {
    const changed: Changed = {};
    // One that arrived while its narrow loads is not in the feed yet, but joins it when the answer comes.
    const message = this.feed.find((known) => known.id === event.message_id) ?? this.loading?.arrived.find((known) => known.id === event.message_id);
    if (message && event.rendered_content !== undefined) {
      message.content = event.rendered_content;
      message.last_edit_timestamp = event.edit_timestamp;
      changed.feed = true;
    }
    // A move of topic or channel: unread places and topic lists follow it; the feed is simply fetched again.
    if (event.new_stream_id !== undefined || event.subject !== undefined || event.topic !== undefined) {
      const topic: string | undefined = event.subject ?? event.topic;
      for (const id of event.message_ids ?? []) {
        const place = this.unread.get(id);
        if (place?.streamId !== undefined) this.unread.set(id, { streamId: event.new_stream_id ?? place.streamId, topic: topic ?? place.topic });
      }
      this.topics.delete(event.stream_id);
      if (event.new_stream_id !== undefined) this.topics.delete(event.new_stream_id);
      changed.sidebar = true;
      changed.refetch = true;
      const here = this.narrow;
      if (event.propagate_mode === 'change_all' && here?.kind === 'channel' && here.topic !== undefined && here.streamId === event.stream_id && sameTopic(here.topic, event.orig_subject ?? '')) {
        changed.follow = { kind: 'channel', streamId: event.new_stream_id ?? here.streamId, topic: topic ?? here.topic };
      }
    }
    return changed;
  }

  private deleteMessages(ids: number[]): Changed {
    for (const id of ids) this.unread.delete(id);
    if (this.loading) this.loading.arrived = this.loading.arrived.filter((message) => !ids.includes(message.id));
    const before = this.feed.length;
    this.feed = this.feed.filter((message) => !ids.includes(message.id));
    return { sidebar: true, feed: this.feed.length !== before };
  }

  private react(event: Json): Changed {
    const message = this.feed.find((known) => known.id === event.message_id);
    if (!message) return {};
    const same = (reaction: Reaction) => reaction.user_id === event.user_id && reaction.emoji_code === event.emoji_code && reaction.reaction_type === event.reaction_type;
    message.reactions = message.reactions.filter((reaction) => !same(reaction));
    if (event.op === 'add') {
      message.reactions.push({ emoji_name: event.emoji_name, emoji_code: event.emoji_code, reaction_type: event.reaction_type, user_id: event.user_id });
    }
    return { feed: true };
  }

  private updateFlags(event: Json): Changed {
    if (event.flag === 'starred') return this.starred(event);
    if (event.flag !== 'read') return {};
    if (event.op === 'add') {
      if (event.all) this.unread.clear();
      for (const id of event.messages) this.unread.delete(id);
    } else {
      // message_details says where each message that became unread again lives.
      for (const id of event.messages) {
        const details = event.message_details?.[id];
        if (!details) continue;
        if (details.type === 'stream') this.unread.set(id, { streamId: details.stream_id, topic: details.topic });
        else {
          const peers = ((details.user_ids ?? []) as number[]).filter((user) => user !== this.me.userId).sort((a, b) => a - b);
          this.unread.set(id, { dm: narrowKey({ kind: 'dm', userIds: peers }) });
        }
      }
    }
    for (const message of this.feed) {
      if (!event.all && !event.messages.includes(message.id)) continue;
      message.flags = event.op === 'add' ? [...new Set([...message.flags, 'read'])] : message.flags.filter((flag) => flag !== 'read');
    }
    return { sidebar: true };
  }

  /** The modern `presences` map when the queue has it, else the legacy per-client `presence`. */
  private presenceEvent(event: Json): Changed {
    if (event.presences) {
      for (const [id, entry] of Object.entries(event.presences as Record<string, Json>)) this.presences.set(Number(id), { active: entry.active_timestamp ?? 0, idle: entry.idle_timestamp ?? 0 });
    } else if (event.presence) {
      const known = this.presences.get(event.user_id) ?? { active: 0, idle: 0 };
      for (const client of Object.values(event.presence as Record<string, Json>)) {
        if (client.status === 'active') known.active = Math.max(known.active, client.timestamp);
        else known.idle = Math.max(known.idle, client.timestamp);
      }
      this.presences.set(event.user_id, known);
    }
    return { sidebar: true };
  }

  private starred(event: Json): Changed {
    for (const message of this.feed) {
      if (!event.messages.includes(message.id)) continue;
      message.flags = event.op === 'add' ? [...new Set([...message.flags, 'starred'])] : message.flags.filter((flag) => flag !== 'starred');
    }
    // The starred view shows what is starred now.
    return this.narrow?.kind === 'starred' ? { refetch: true } : { feed: true };
  }

  private typingEvent(event: Json): Changed {
    const sender: number = event.sender.user_id;
    if (sender === this.me.userId) return {};
    const narrow: Narrow = event.message_type === 'stream'
      ? { kind: 'channel', streamId: event.stream_id, topic: event.topic }
      : { kind: 'dm', userIds: sortedIds([sender, ...(event.recipients as { user_id: number }[]).map((user) => user.user_id)].filter((id) => id !== this.me.userId)) };
    const key = `${narrowKey(narrow)}|${sender}`;
    if (event.op === 'start') this.typists.set(key, { userId: sender, narrow, expiresAt: Date.now() + this.typingTimes.startedExpiryMs });
    else this.typists.delete(key);
    return { typing: true };
  }

  private subscriptionEvent(event: Json): Changed {
    if (event.op === 'add') for (const sub of event.subscriptions as Subscription[]) this.subscriptions.set(sub.stream_id, sub);
    else if (event.op === 'remove') for (const sub of event.subscriptions as { stream_id: number }[]) this.subscriptions.delete(sub.stream_id);
    else if (event.op === 'update') {
      const sub = this.subscriptions.get(event.stream_id);
      if (sub) (sub as unknown as Record<string, unknown>)[event.property] = event.value;
    } else return {};
    return { sidebar: true };
  }

  private streamEvent(event: Json): Changed {
    if (event.op === 'update') {
      const sub = this.subscriptions.get(event.stream_id);
      if (sub && event.property === 'name') sub.name = event.value;
      if (sub && event.property === 'description') {
        sub.description = event.value;
        sub.rendered_description = event.rendered_description ?? sub.rendered_description;
      }
      return { sidebar: true, feed: true };
    }
    if (event.op === 'delete') for (const stream of event.streams as { stream_id: number }[]) this.subscriptions.delete(stream.stream_id);
    return { sidebar: true };
  }

  private userEvent(event: Json): Changed {
    const person = event.person as Partial<User> & { user_id: number };
    if (event.op === 'add') this.users.set(person.user_id, person as User);
    else if (event.op === 'remove') this.users.delete(person.user_id);
    else if (event.op === 'update') {
      const user = this.users.get(person.user_id);
      if (user) Object.assign(user, person);
      if (user && 'avatar_url' in person) noteAvatar(user);
      if (person.user_id === this.me.userId && person.full_name) this.me.fullName = person.full_name;
    }
    return { sidebar: true, feed: true };
  }

  private settingsEvent(event: Json): Changed {
    if (event.op !== 'update') return {};
    this.userSettings[event.property] = event.value;
    if (event.property === 'twenty_four_hour_time') {
      clock.hour12 = event.value === true ? false : undefined;
      return { settings: true, feed: true };
    }
    if (event.property === 'color_scheme') this.settings.colorScheme = event.value;
    else if (event.property === 'enter_sends') this.settings.enterSends = event.value;
    else if (event.property === 'send_stream_typing_notifications') this.settings.typingNotifications = event.value;
    else if (event.property === 'enable_desktop_notifications') this.settings.desktopNotifications = event.value;
    else if (event.property === 'pm_content_in_desktop_notifications') this.settings.directContentInNotifications = event.value;
    return { settings: true };
  }

  private scheduledEvent(event: Json): Changed {
    if (event.op === 'add') for (const message of event.scheduled_messages as ScheduledMessage[]) this.scheduled.set(message.scheduled_message_id, message);
    else if (event.op === 'update') this.scheduled.set(event.scheduled_message.scheduled_message_id, event.scheduled_message);
    else if (event.op === 'remove') this.scheduled.delete(event.scheduled_message_id);
    return { scheduled: true };
  }

  private snippetsEvent(event: Json): Changed {
    if (event.op === 'add' || event.op === 'update') this.snippets.set(event.saved_snippet.id, event.saved_snippet);
    else if (event.op === 'remove') this.snippets.delete(event.saved_snippet_id);
    return { scheduled: true };
  }

  /** Scheduled messages still to be sent, soonest first. */
  scheduledByTime(): ScheduledMessage[] {
    return [...this.scheduled.values()].filter((message) => !message.failed).sort((a, b) => a.scheduled_delivery_timestamp - b.scheduled_delivery_timestamp);
  }

  private draftsEvent(event: Json): Changed {
    if (event.op === 'add') for (const draft of event.drafts as Draft[]) this.drafts.set(draft.id, draft);
    else if (event.op === 'update') this.drafts.set(event.draft.id, event.draft);
    else if (event.op === 'remove') this.drafts.delete(event.draft_id);
    return { drafts: true };
  }
}

type Reaction = Message['reactions'][number];

/** Whether `inner` (a topic or a conversation) is shown by `outer`. */
function within(inner: Narrow, outer: Narrow): boolean {
  if (outer.kind === 'channel' && outer.topic === undefined) return inner.kind === 'channel' && inner.streamId === outer.streamId;
  return narrowKey(inner) === narrowKey(outer);
}

const sortedIds = (ids: number[]) => [...new Set(ids)].sort((a, b) => a - b);
const sortedKey = (ids: number[]) => sortedIds(ids).join(',');

