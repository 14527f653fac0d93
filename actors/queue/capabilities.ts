import type { ApiEvent } from '../events.ts';
import { INACCESSIBLE_USER } from '../realm/user-access.ts';
import { isDefaultAvatarUrl } from '../realm/avatars/urls.ts';
import { EMPTY_TOPIC_DISPLAY_NAME } from '../register/realm-limits.ts';
import type { QueueSpec } from './spec.ts';

/**
 * Client capabilities change the shape of some events. Every such rule lives here, applied at delivery:
 * queues that get the same shape share one serialization.
 */
interface Adapter<E extends ApiEvent = ApiEvent> {
  /** the event types a queue may have asked for to receive this event: its own and its legacy forms */
  types(): string[];
  /** names the shape a queue gets; equal names get the very same events */
  shape(event: E, spec: QueueSpec): string;
  /** the events a queue with that shape gets */
  render(event: E, spec: QueueSpec): ApiEvent[];
  /**
   * Whether a queue gets the event at all, checked when recipients are resolved (absent: every queue that
   * asked for the type). Returns null when the event is for every queue, so resolving skips the check.
   */
  gate?(event: E): ((spec: QueueSpec) => boolean) | null;
}

type EventOf<T extends ApiEvent['type']> = Extract<ApiEvent, { type: T }>;

const has = (spec: QueueSpec, capability: string) => spec.capabilities[capability] === true;

// Settings the legacy events announce, split as the original server splits them (display vs notifications).
const LEGACY_DISPLAY_SETTINGS = new Set([
  'color_scheme', 'default_language', 'demote_inactive_streams', 'emojiset', 'enter_sends', 'fluid_layout_width',
  'high_contrast_mode', 'left_side_userlist', 'starred_message_counts', 'timezone', 'translate_emoticons',
  'twenty_four_hour_time', 'user_list_style', 'web_home_view', 'web_escape_navigates_to_home_view',
  'web_mark_read_on_scroll_policy', 'web_stream_unreads_count_display_policy', 'web_font_size_px',
  'web_line_height_percent', 'display_emoji_reaction_users', 'web_animate_image_previews', 'web_channel_default_view',
  'receives_typing_notifications', 'web_suggest_update_timezone', 'hide_ai_features', 'web_navigate_to_sent_message',
]);

function legacySettingEvent(event: EventOf<'user_settings'>): ApiEvent | null {
  const property = event.property;
  // The registry names the user as it builds the event (actors/registry.ts); only a user without a realm has none.
  const user = event.user_email ?? '';
  if (LEGACY_DISPLAY_SETTINGS.has(property)) {
    const legacy: EventOf<'update_display_settings'> = { type: 'update_display_settings', user, setting_name: property, setting: event.value };
    if (event.language_name !== undefined) legacy.language_name = event.language_name;
    return legacy;
  }
  if (/notification|^enable_|wildcard_mentions_notify|presence_enabled|realm_name_in_email|desktop_icon_count/.test(property)) {
    return { type: 'update_global_notifications', user, notification_name: property, setting: event.value };
  }
  return null;
}

/** Without `empty_topic_name`, a client sees the realm's display name where the topic is empty. */
function withTopicNames<E extends object>(event: E, fields: readonly (keyof E & string)[]): E {
  const copy = { ...event };
  for (const field of fields) if (copy[field] === '') Object.assign(copy, { [field]: EMPTY_TOPIC_DISPLAY_NAME });
  return copy;
}

const isChannelMessage = (event: EventOf<'message'>) => event.message.type === 'stream';

const emptyTopicShape = (spec: QueueSpec) => (has(spec, 'empty_topic_name') ? 'empty' : 'display');

/**
 * Presence events come in three shapes, built from one internal event that carries every field:
 * `simplified_presence_events` (the modern `presences` map), `slim_presence` (no email), and legacy.
 */
function presenceShape(spec: QueueSpec): 'simplified' | 'slim' | 'legacy' {
  if (has(spec, 'simplified_presence_events')) return 'simplified';
  return spec.slimPresence === true ? 'slim' : 'legacy';
}

function renderPresence(event: EventOf<'presence'>, spec: QueueSpec): ApiEvent {
  const { presences, email, ...legacy } = event;
  switch (presenceShape(spec)) {
    case 'simplified':
      return { type: 'presence', presences };
    case 'slim':
      return legacy;
    case 'legacy':
      return { ...legacy, email };
  }
}

const channelTyping = (event: EventOf<'typing'>) => event.message_type === 'stream';

const isPlaceholder = (event: EventOf<'realm_user'>) => event[INACCESSIBLE_USER] === true;

/**
 * Linkifiers carry URL templates since feature level 176, which older clients cannot read: they get no
 * linkifiers at all, neither at registration (register/builders/linkifiers.ts) nor in events.
 */
export const acceptsLinkifiers = (capabilities: Readonly<Record<string, boolean>> | undefined) => capabilities?.linkifier_url_template === true;
/**
 * `user_avatar_url_field_optional`: a client that declares it fetches `GET /avatar/{user_id}` for a user object
 * without `avatar_url`, and the server may leave the field out at its discretion (to keep large user lists
 * small). This server leaves it out for users showing its default picture, whose URL the redirect finds
 * again; an uploaded avatar's URL is always sent. Applied to registration's user lists (register/builders/
 * realm-user.ts) and to `realm_user` add events; avatar update events always carry every avatar field.
 */
export const AVATAR_URL_OPTIONAL = 'user_avatar_url_field_optional';

export function withOptionalAvatarUrl<T extends { avatar_url?: unknown }>(person: T, isDefault: boolean, capabilities: Readonly<Record<string, boolean>> | undefined): T {
  if (!isDefault || capabilities?.[AVATAR_URL_OPTIONAL] !== true) return person;
  const { avatar_url: _omitted, ...rest } = person;
  return rest as T;
}

type UserAdded = Extract<EventOf<'realm_user'>, { op: 'add' }>;
const addsDefaultAvatarUser = (event: EventOf<'realm_user'>): event is UserAdded => event.op === 'add' && isDefaultAvatarUrl(event.person.avatar_url);

const adapters: { [T in ApiEvent['type']]?: Adapter<EventOf<T>> } = {
  delete_message: {
    types: () => ['delete_message'],
    shape: (_event, spec) => (has(spec, 'bulk_message_deletion') ? 'bulk' : 'single'),
    render(event, spec) {
      if (has(spec, 'bulk_message_deletion')) return [event];
      const { message_ids: ids, ...rest } = event;
      return (ids as number[]).map((id) => ({ ...rest, message_id: id }));
    },
  },
  stream: {
    types: () => ['stream'],
    shape: (event, spec) => (event.op === 'update' && event.property === 'is_archived' && !has(spec, 'archived_channels') ? 'legacy' : 'modern'),
    render(event, spec) {
      if (event.op !== 'update' || event.property !== 'is_archived' || has(spec, 'archived_channels')) return [event];
      // Clients that do not know archived channels see an archived one deleted (and a restored one nowhere).
      const streams = [{ stream_id: event.stream_id, name: event.name }];
      return event.value === true ? [{ type: 'stream', op: 'delete', stream_ids: [event.stream_id], streams }] : [];
    },
  },
  user_group: {
    types: () => ['user_group'],
    shape: (event, spec) => (isDeactivation(event) && !has(spec, 'include_deactivated_groups') ? 'legacy' : 'modern'),
    render: (event, spec) =>
      isDeactivation(event) && !has(spec, 'include_deactivated_groups') ? [{ type: 'user_group', op: 'remove', group_id: event.group_id }] : [event],
  },
  user_settings: {
    types: () => ['user_settings', 'update_display_settings', 'update_global_notifications'],
    shape: (_event, spec) => (has(spec, 'user_settings_object') ? 'object' : 'legacy'),
    render(event, spec) {
      const { user_email: _email, ...modern } = event;
      if (has(spec, 'user_settings_object')) return [modern];
      const legacy = legacySettingEvent(event);
      return legacy ? [modern, legacy] : [modern];
    },
  },
  message: {
    types: () => ['message'],
    // Only a channel message's empty topic is shown by name; a direct message's subject stays empty.
    shape: (event, spec) => (isChannelMessage(event) ? emptyTopicShape(spec) : 'as-is'),
    render: (event, spec) =>
      !isChannelMessage(event) || has(spec, 'empty_topic_name')
        ? [event]
        : [{ ...event, message: withTopicNames(event.message, ['subject']) }],
  },
  user_topic: {
    types: () => ['user_topic'],
    shape: (_event, spec) => emptyTopicShape(spec),
    render: (event, spec) => (has(spec, 'empty_topic_name') ? [event] : [withTopicNames(event, ['topic_name'])]),
  },
  typing: {
    types: () => ['typing'],
    // Channel typing notifications only reach clients that declared they can show them.
    gate: (event) => (channelTyping(event) ? (spec) => has(spec, 'stream_typing_notifications') : null),
    shape: (event, spec) => (channelTyping(event) && event.topic === '' ? emptyTopicShape(spec) : 'as-is'),
    render: (event, spec) => (channelTyping(event) && !has(spec, 'empty_topic_name') ? [withTopicNames(event, ['topic'])] : [event]),
  },
  // As in the original, a client that asked for `user_topic` by name reads that, not the legacy list.
  muted_topics: {
    types: () => ['muted_topics'],
    gate: () => (spec) => spec.eventTypes === null || !spec.eventTypes.includes('user_topic'),
    shape: () => 'as-is',
    render: (event) => [event],
  },
  realm_linkifiers: {
    types: () => ['realm_linkifiers'],
    gate: () => (spec) => acceptsLinkifiers(spec.capabilities),
    shape: () => 'as-is',
    render: (event) => [event],
  },
  presence: {
    types: () => ['presence'],
    shape: (_event, spec) => presenceShape(spec),
    render: (event, spec) => [renderPresence(event, spec)],
  },
  realm_user: {
    types: () => ['realm_user'],
    // A limited guest's client that declared `user_list_incomplete` gets no placeholder for a user it may not
    // access (realm/user-access.ts); the others get it without the internal mark.
    // Users added with the default picture go without `avatar_url` to clients that allow it (see above).
    gate: (event) => (isPlaceholder(event) ? (spec) => !has(spec, 'user_list_incomplete') : null),
    shape: (event, spec) => {
      const avatar = addsDefaultAvatarUser(event) && has(spec, AVATAR_URL_OPTIONAL) ? '-no-avatar-url' : '';
      return (isPlaceholder(event) ? 'placeholder' : 'as-is') + avatar;
    },
    render(event, spec) {
      let out = event;
      if (isPlaceholder(event)) {
        const { [INACCESSIBLE_USER]: _mark, ...placeholder } = event;
        out = placeholder;
      }
      if (addsDefaultAvatarUser(out)) out = { ...out, person: withOptionalAvatarUrl(out.person, true, spec.capabilities) };
      return [out];
    },
  },
  update_message: {
    types: () => ['update_message'],
    shape: (_event, spec) => emptyTopicShape(spec),
    render: (event, spec) =>
      has(spec, 'empty_topic_name') ? [event] : [withTopicNames(event, ['subject', 'orig_subject'])],
  },
};

type GroupUpdate = Extract<EventOf<'user_group'>, { op: 'update' }>;
function isDeactivation(event: EventOf<'user_group'>): event is GroupUpdate {
  return event.op === 'update' && event.data.deactivated === true;
}

/** The adapter of an event's type: the table keys each by its type, which TypeScript cannot relate to the event. */
const adapterOf = (event: Pick<ApiEvent, 'type'>) => adapters[event.type] as Adapter | undefined;

/** The event types under which a queue may receive this event. */
export function deliveryTypes(event: Pick<ApiEvent, 'type'>): string[] {
  return adapterOf(event)?.types() ?? [event.type];
}

/** The capability check a queue must pass to get the event at all (null: none, every queue gets it). */
export function gateFor(event: ApiEvent): ((spec: QueueSpec) => boolean) | null {
  return adapterOf(event)?.gate?.(event) ?? null;
}

/** Which shape of the event a queue gets (null: the event as it is, for every queue). */
export function shapeFor(event: ApiEvent, spec: QueueSpec): string | null {
  return adapterOf(event)?.shape(event, spec) ?? null;
}

export function renderFor(event: ApiEvent, spec: QueueSpec): ApiEvent[] {
  return adapterOf(event)?.render(event, spec) ?? [event];
}
