import type { ApiClient, Credentials, Params } from './server.ts';

/**
 * A replay of the terminal client (zulip/zulip-terminal) over HTTP: the requests it makes, with its parameters,
 * and every key it reads from the answers and from the events it handles. The client indexes with plain
 * `dict[key]`, so a key missing here is a KeyError traceback there (`.get` reads are checked only when present).
 * What its files read:
 * - model.py: POST /register (its event and fetch types, client_gravatar, apply_markdown, include_subscribers)
 *   and from it user_id, email, full_name, realm_name, the version, realm_users, cross_realm_bots, presences by
 *   email, subscriptions (colour, pin_to_top, in_home_view, desktop_notifications, subscribers, ...),
 *   muted_topics as [channel, topic, time], realm_user_groups, realm_emoji, user_settings, the legacy
 *   twenty_four_hour_time and pm_content_in_desktop_notifications, realm_message_retention_days,
 *   max_message_id, queue_id, last_event_id; GET /messages (anchor, found_newest); the handlers' event keys.
 * - helper.py: unread_msgs (mentions, pms' sender_id, streams' stream_id and topic, huddles' user_ids_string),
 *   each message's id, sender_id, type, flags, display_recipient, stream_id, subject.
 * - ui_tools/messages.py: the rest of each message (sender_full_name, sender_email, timestamp, is_me_message,
 *   content, reactions, topic_links); realm_allow_message_editing, realm_message_content_edit_limit_seconds
 *   and raw_content before an edit.
 * - ui_tools/views.py: realm_allow_edit_history and GET /messages/{id}/history (content, topic, timestamp,
 *   user_id, prev_content, prev_topic) in message info, with each reaction's user.full_name; user roles and
 *   time zones in user info.
 * - ui_tools/boxes.py: POST /typing, POST /messages (`subject` for the topic), PATCH /messages/{id}, GET
 *   /users/me/{id}/topics. core.py: the search anchor, the narrows, DELETE /events on exit. cli/run.py: GET
 *   /server_settings (require_email_format_usernames, email_auth_enabled), POST /fetch_api_key (api_key).
 */

/** The event types the client registers for, each with a handler (model.py `event_actions`). */
export const TERMINAL_EVENT_TYPES = [
  'message', 'update_message', 'reaction', 'subscription', 'typing', 'update_message_flags',
  'update_global_notifications', 'update_display_settings', 'user_settings', 'realm_emoji',
];

/**
 * The state fetched once at start (model.py `initial_data_to_fetch`, plus `muted_users` and
 * `custom_profile_fields` that helper.py and the user info popup of the current client read). The version
 * fetch type is spelled with the neutral rename the user patched into the client.
 */
export const TERMINAL_FETCH_TYPES = [
  'realm', 'presence', 'subscription', 'message', 'starred_messages', 'update_message_flags', 'muted_topics',
  'muted_users', 'realm_user', 'realm_user_groups', 'update_global_notifications', 'update_display_settings',
  'user_settings', 'realm_emoji', 'custom_profile_fields', 'svc_version',
];

/** The user agent the python client sends for the terminal client (`Client(client="ZulipTerminal/...")`). */
export const TERMINAL_USER_AGENT = 'ZulipTerminal/0.7.0 Linux-6.1-x86_64 (Linux; 6.1) ZulipPython/0.9.0';

/** The anchor the client sends for "newest" in a search (core.py `search_messages`). */
export const SEARCH_ANCHOR = 10_000_000_000;

type Kind = 'string' | 'number' | 'boolean' | 'array' | 'object' | 'null';
/** key -> accepted kinds; a key ending in `?` is read with `.get` (or after an `in` check), so it may be absent. */
export type Reads = Record<string, Kind | Kind[]>;

const kindOf = (value: unknown): Kind | 'undefined' =>
  value === null ? 'null' : Array.isArray(value) ? 'array' : (typeof value as Kind | 'undefined');

/** The problems a read of these keys would meet: a missing key, or a value of a kind the client cannot use. */
export function readProblems(where: string, value: unknown, reads: Reads): string[] {
  if (kindOf(value) !== 'object') return [`${where} is ${kindOf(value)}, not an object`];
  const object = value as Record<string, unknown>;
  const problems: string[] = [];
  for (const [spelled, kinds] of Object.entries(reads)) {
    const optional = spelled.endsWith('?');
    const key = optional ? spelled.slice(0, -1) : spelled;
    if (!(key in object)) {
      if (!optional) problems.push(`${where}.${key} is missing`);
      continue;
    }
    const accepted = Array.isArray(kinds) ? kinds : [kinds];
    const kind = kindOf(object[key]);
    if (!accepted.includes(kind as Kind)) problems.push(`${where}.${key} is ${kind}, the client reads ${accepted.join('|')}`);
  }
  return problems;
}

/** The stream colour must be one `canonicalize_color` accepts, or it raises ValueError. */
const COLOR = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i;

/** What index_messages, MessageBox and the message info popup read from each message of a fetch or event. */
export function messageProblems(where: string, message: Record<string, unknown>, fromEvent = false): string[] {
  const problems = readProblems(where, message, {
    // a message event's flags are beside the message: the handler copies `event.get("flags", [])` into it
    id: 'number', sender_id: 'number', type: 'string', [fromEvent ? 'flags?' : 'flags']: 'array', sender_full_name: 'string', sender_email: 'string',
    timestamp: 'number', is_me_message: 'boolean', content: 'string', reactions: 'array', display_recipient: ['string', 'array'],
    'topic_links?': 'array',
  });
  if (message.type === 'stream') {
    problems.push(...readProblems(where, message, { display_recipient: 'string', stream_id: 'number', subject: 'string' }));
    for (const [i, link] of ((message.topic_links ?? []) as unknown[]).entries()) {
      problems.push(...readProblems(`${where}.topic_links[${i}]`, link, { url: 'string', text: 'string' }));
    }
  } else if (message.type === 'private') {
    for (const [i, recipient] of ((message.display_recipient ?? []) as unknown[]).entries()) {
      problems.push(...readProblems(`${where}.display_recipient[${i}]`, recipient, { id: 'number', email: 'string', full_name: 'string' }));
    }
  } else {
    problems.push(`${where}.type is ${String(message.type)}: MessageBox raises "Invalid message type"`);
  }
  for (const [i, reaction] of ((message.reactions ?? []) as unknown[]).entries()) problems.push(...reactionProblems(`${where}.reactions[${i}]`, reaction));
  return problems;
}

/**
 * A reaction as the reaction toggle finds it (`emoji_code`, then `user.user_id`, `user.id` or `user_id`) and the
 * message info popup lists it (`reaction["user"]["full_name"]`). A message's reactions carry no `user` object
 * since feature level 328 (the document's EmojiReaction forbids it), so only reactions the client appended from
 * events, whose `user` was re-added at feature level 339, have one: `withUser` asks for it.
 */
export function reactionProblems(where: string, reaction: unknown, withUser = false): string[] {
  const problems = readProblems(where, reaction, { emoji_code: 'string', emoji_name: 'string', [withUser ? 'user' : 'user?']: 'object', 'user_id?': 'number' });
  const user = (reaction as { user?: Record<string, unknown> }).user;
  if (user) {
    problems.push(...readProblems(`${where}.user`, user, { full_name: 'string', 'id?': 'number', 'user_id?': 'number' }));
    if (typeof user.id !== 'number' && typeof user.user_id !== 'number') problems.push(`${where}.user has neither id nor user_id`);
  } else if (typeof (reaction as { user_id?: unknown }).user_id !== 'number') {
    problems.push(`${where} names its user neither in user nor in user_id`);
  }
  return problems;
}

/** What model.py and helper.py read from the registration (`initial_data`) at start and in popups. */
export function initialDataProblems(data: Record<string, unknown>): string[] {
  const problems = readProblems('register', data, {
    queue_id: 'string', last_event_id: 'number', max_message_id: 'number',
    svc_version: 'string', 'svc_feature_level?': 'number',
    user_id: 'number', email: 'string', full_name: 'string', realm_name: 'string',
    realm_users: 'array', cross_realm_bots: 'array', presences: 'object', subscriptions: 'array',
    realm_message_retention_days: ['number', 'null'], muted_topics: 'array', muted_users: 'array', realm_user_groups: 'array',
    unread_msgs: 'object', realm_emoji: 'object', user_settings: 'object', custom_profile_fields: 'array',
    twenty_four_hour_time: 'boolean', pm_content_in_desktop_notifications: 'boolean',
    'max_stream_name_length?': 'number', 'max_topic_length?': 'number', 'max_message_length?': 'number',
    // the message info popup and the edit key
    realm_allow_edit_history: 'boolean', realm_allow_message_editing: 'boolean',
    // compared with `> 0`: null would be a TypeError
    realm_message_content_edit_limit_seconds: 'number',
  });
  problems.push(...readProblems('register.user_settings', data.user_settings, { send_private_typing_notifications: 'boolean' }));
  const users = (data.realm_users ?? []) as Record<string, unknown>[];
  users.forEach((user, i) => problems.push(...readProblems(`register.realm_users[${i}]`, user, {
    user_id: 'number', full_name: 'string', email: 'string', 'bot_owner_id?': ['number', 'null'], 'timezone?': 'string',
    'date_joined?': 'string', 'is_bot?': 'boolean', 'role?': 'number',
  })));
  // The user info popup looks the role up in ROLE_BY_ID (owner, administrator, moderator, member, guest).
  users.forEach((user, i) => {
    if (!user.is_bot && user.role !== undefined && ![100, 200, 300, 400, 600].includes(user.role as number)) problems.push(`register.realm_users[${i}].role ${String(user.role)} is not in ROLE_BY_ID`);
  });
  // get_all_users builds the current user's entry from realm_users; without it `current_user` is unbound.
  if (!users.some((user) => user.user_id === data.user_id)) problems.push('register.realm_users lacks the current user');
  ((data.cross_realm_bots ?? []) as unknown[]).forEach((bot, i) =>
    problems.push(...readProblems(`register.cross_realm_bots[${i}]`, bot, { email: 'string', full_name: 'string', user_id: 'number' })));
  problems.push(...presenceProblems('register.presences', data.presences));
  ((data.subscriptions ?? []) as Record<string, unknown>[]).forEach((sub, i) => {
    const where = `register.subscriptions[${i}]`;
    problems.push(...readProblems(where, sub, {
      stream_id: 'number', name: 'string', color: 'string', description: 'string', rendered_description: 'string',
      pin_to_top: 'boolean', in_home_view: 'boolean', desktop_notifications: ['boolean', 'null'], invite_only: 'boolean',
      'is_web_public?': 'boolean', subscribers: 'array', message_retention_days: ['number', 'null'], date_created: 'number',
      history_public_to_subscribers: 'boolean', stream_weekly_traffic: ['number', 'null'], 'stream_post_policy?': 'number',
    }));
    if (typeof sub.color === 'string' && !COLOR.test(sub.color)) problems.push(`${where}.color ${sub.color} fails canonicalize_color`);
  });
  // With a feature level the client reads each muted topic as [stream name, topic, date muted].
  ((data.muted_topics ?? []) as unknown[]).forEach((entry, i) => {
    const ok = Array.isArray(entry) && entry.length === 3 && typeof entry[0] === 'string' && typeof entry[1] === 'string' && typeof entry[2] === 'number';
    if (!ok) problems.push(`register.muted_topics[${i}] is ${JSON.stringify(entry)}, not [stream, topic, timestamp]`);
  });
  ((data.muted_users ?? []) as unknown[]).forEach((entry, i) => problems.push(...readProblems(`register.muted_users[${i}]`, entry, { id: 'number', timestamp: 'number' })));
  ((data.realm_user_groups ?? []) as unknown[]).forEach((group, i) => problems.push(...readProblems(`register.realm_user_groups[${i}]`, group, { id: 'number', name: 'string' })));
  problems.push(...unreadProblems(data.unread_msgs));
  problems.push(...realmEmojiProblems('register.realm_emoji', data.realm_emoji));
  return problems;
}

/** classify_unread_counts */
function unreadProblems(unread: unknown): string[] {
  const problems = readProblems('register.unread_msgs', unread, { mentions: 'array', pms: 'array', streams: 'array', huddles: 'array' });
  const lists = (unread ?? {}) as Record<string, Record<string, unknown>[]>;
  (lists.pms ?? []).forEach((pm, i) => problems.push(...readProblems(`unread_msgs.pms[${i}]`, pm, { sender_id: 'number', unread_message_ids: 'array' })));
  (lists.streams ?? []).forEach((entry, i) => problems.push(...readProblems(`unread_msgs.streams[${i}]`, entry, { stream_id: 'number', topic: 'string', unread_message_ids: 'array' })));
  (lists.huddles ?? []).forEach((entry, i) => {
    problems.push(...readProblems(`unread_msgs.huddles[${i}]`, entry, { user_ids_string: 'string', unread_message_ids: 'array' }));
    if (typeof entry.user_ids_string === 'string' && !/^\d+(,\d+)*$/.test(entry.user_ids_string)) problems.push(`unread_msgs.huddles[${i}].user_ids_string does not split into ints`);
  });
  return problems;
}

/** Presences by email: get_all_users reads status and timestamp of every entry, `aggregated` included. */
export function presenceProblems(where: string, presences: unknown): string[] {
  if (kindOf(presences) !== 'object') return [`${where} is ${kindOf(presences)}, not an object`];
  const problems: string[] = [];
  for (const [email, clients] of Object.entries(presences as Record<string, unknown>)) {
    if (!email.includes('@')) problems.push(`${where} is keyed by ${email}, not by email`);
    problems.push(...readProblems(`${where}[${email}]`, clients, { aggregated: 'object' }));
    for (const [client, entry] of Object.entries((clients ?? {}) as Record<string, unknown>)) {
      problems.push(...readProblems(`${where}[${email}].${client}`, entry, { status: 'string', timestamp: 'number' }));
    }
  }
  return problems;
}

/** generate_all_emoji_data: every custom emoji by code, with its name and whether it is deactivated. */
function realmEmojiProblems(where: string, emoji: unknown): string[] {
  if (kindOf(emoji) !== 'object') return [`${where} is ${kindOf(emoji)}, not an object`];
  return Object.entries(emoji as Record<string, unknown>).flatMap(([code, entry]) => readProblems(`${where}[${code}]`, entry, { name: 'string', deactivated: 'boolean' }));
}

export type Event = Record<string, unknown> & { type: string; id: number };

/** What the handler of each registered event type reads (model.py `_handle_*_event`); other types are skipped. */
export function eventProblems(event: Event, featureLevel: number): string[] {
  const where = `event ${event.id} (${event.type}${typeof event.op === 'string' ? ` ${event.op}` : ''})`;
  const problems = readProblems(where, event, { id: 'number', type: 'string' });
  switch (event.type) {
    case 'message':
      problems.push(...readProblems(where, event, { message: 'object', 'flags?': 'array' }));
      problems.push(...messageProblems(`${where}.message`, (event.message ?? {}) as Record<string, unknown>, true));
      break;
    case 'update_message':
      problems.push(...readProblems(where, event, { message_id: 'number', 'rendered_content?': 'string' }));
      if ('subject' in event) problems.push(...readProblems(where, event, { subject: 'string', stream_id: 'number', orig_subject: 'string', message_ids: 'array' }));
      break;
    case 'reaction':
      problems.push(...readProblems(where, event, { message_id: 'number', op: 'string', reaction_type: 'string', emoji_code: 'string', emoji_name: 'string' }));
      // the handler appends `event["user"]` to the message's reactions, which the message info popup reads
      problems.push(...reactionProblems(where, event, true));
      break;
    case 'subscription':
      problems.push(...readProblems(where, event, { op: 'string' }));
      if (event.op === 'update' && ['in_home_view', 'pin_to_top', 'desktop_notifications'].includes(event.property as string)) {
        problems.push(...readProblems(where, event, { stream_id: 'number', value: 'boolean' }));
      } else if (event.op === 'peer_add' || event.op === 'peer_remove') {
        const plural = 'stream_ids' in event && 'user_ids' in event;
        problems.push(...readProblems(where, event, plural ? { stream_ids: 'array', user_ids: 'array' } : { stream_id: 'number', user_id: 'number' }));
      }
      break;
    case 'typing':
      problems.push(...readProblems(where, event, { sender: 'object', op: 'string' }));
      problems.push(...readProblems(`${where}.sender`, event.sender, { email: 'string', user_id: 'number' }));
      if (event.op !== 'start' && event.op !== 'stop') problems.push(`${where}.op ${String(event.op)} raises "Unknown typing event operation"`);
      break;
    case 'update_message_flags':
      problems.push(...readProblems(where, event, { [featureLevel < 32 ? 'operation' : 'op']: 'string', all: 'boolean', flag: 'string', messages: 'array' }));
      break;
    case 'update_global_notifications':
      problems.push(...readProblems(where, event, { notification_name: 'string', setting: ['boolean', 'number', 'string'] }));
      break;
    case 'update_display_settings':
      problems.push(...readProblems(where, event, { setting_name: 'string', setting: ['boolean', 'number', 'string'] }));
      break;
    case 'user_settings':
      problems.push(...readProblems(where, event, { op: 'string', property: 'string', value: ['boolean', 'number', 'string', 'null'] }));
      break;
    case 'realm_emoji':
      problems.push(...realmEmojiProblems(`${where}.realm_emoji`, event.realm_emoji));
      break;
  }
  return problems;
}

/** The parameters of the client's GET /messages (model.py `get_messages`); an anchor of null asks for the first unread. */
export function messagesRequest(narrow: unknown[], anchor: number | null, numBefore: number, numAfter: number): Params {
  return {
    anchor: anchor ?? 0, num_before: numBefore, num_after: numAfter, apply_markdown: true,
    use_first_unread_anchor: anchor === null, client_gravatar: true, narrow: JSON.stringify(narrow),
  };
}

/**
 * One running terminal client: its registration, its event queue polled as `poll_for_events` does (long-poll,
 * no dont_block), and every problem its reads would meet so far.
 */
export class TerminalClient {
  readonly problems: string[] = [];
  initial: Record<string, unknown> = {};
  queueId = '';
  lastEventId = -1;
  featureLevel = 0;
  /** the anchor of the last GET /messages, which the client keeps as the narrow's focus when it asked for the first unread */
  lastAnchor: unknown;
  /** message ids the client marks EDITED, from update_message events (index["edited_messages"]) */
  readonly edited = new Set<number>();

  constructor(readonly api: ApiClient, readonly credentials: Credentials) {}

  /** `_register_desired_events(fetch_data=True)`: how the python client encodes the call, narrow [] included. */
  async register(fetchTypes: string[] | null = TERMINAL_FETCH_TYPES): Promise<Record<string, unknown>> {
    const result = await this.api.post('/register', {
      event_types: TERMINAL_EVENT_TYPES, narrow: [], fetch_event_types: fetchTypes,
      client_gravatar: true, apply_markdown: true, include_subscribers: true,
    });
    if (result.status !== 200) throw new Error(`register failed: ${JSON.stringify(result.body)}`);
    this.queueId = result.body.queue_id;
    this.lastEventId = result.body.last_event_id;
    return result.body;
  }

  async start(): Promise<void> {
    this.initial = await this.register();
    this.featureLevel = (this.initial.svc_feature_level as number | undefined) ?? 0;
    this.problems.push(...initialDataProblems(this.initial));
  }

  /** GET /messages as the client asks, each message checked as index_messages and MessageBox read it. */
  async messages(narrow: unknown[], anchor: number | null, numBefore = 30, numAfter = 10): Promise<Record<string, unknown>[]> {
    const result = await this.api.get('/messages', messagesRequest(narrow, anchor, numBefore, numAfter));
    const where = `GET /messages ${JSON.stringify(narrow)}`;
    if (result.status !== 200) {
      this.problems.push(`${where} answered ${result.status} ${JSON.stringify(result.body)}`);
      return [];
    }
    this.problems.push(...readProblems(where, result.body, { messages: 'array', 'found_newest?': 'boolean', ...(anchor === null ? { anchor: 'number' } : {}) }));
    this.lastAnchor = result.body.anchor;
    const messages = result.body.messages as Record<string, unknown>[];
    messages.forEach((message) => this.problems.push(...messageProblems(`${where} message ${String(message.id)}`, message)));
    return messages;
  }

  /** Long-polls until an event matching `until` arrives, checking every event as its handler would read it. */
  async poll(until: (event: Event) => boolean): Promise<Event[]> {
    const seen: Event[] = [];
    for (;;) {
      const result = await this.api.get('/events', { queue_id: this.queueId, last_event_id: this.lastEventId });
      if (result.status !== 200) throw new Error(`events failed: ${JSON.stringify(result.body)}`);
      const events = result.body.events as Event[];
      for (const event of events) {
        this.lastEventId = Math.max(this.lastEventId, event.id);
        if (!TERMINAL_EVENT_TYPES.includes(event.type)) continue;
        this.problems.push(...eventProblems(event, this.featureLevel));
        if (event.type === 'update_message') this.edited.add(event.message_id as number);
      }
      seen.push(...events);
      if (events.some(until)) return seen;
    }
  }

  /** The problems met since the last call, so each stage of a session reports its own. */
  takeProblems(): string[] {
    return this.problems.splice(0);
  }

  /** Sends a request the client makes and records a non-success answer (shown in the footer, not a traceback). */
  async call(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, params?: Params): Promise<Record<string, unknown>> {
    const result = await this.api.request(method, path, params);
    if (result.status !== 200 || result.body?.result !== 'success') {
      this.problems.push(`${method} ${path} answered ${result.status} ${JSON.stringify(result.body)}`);
    }
    return result.body ?? {};
  }
}
