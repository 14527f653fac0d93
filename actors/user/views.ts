import { EMPTY_TOPIC_DISPLAY_NAME } from '../register/realm-limits.ts';
import type { WireSchema } from '../wire/events.ts';
import { EMOJISET_CHOICES, NOTIFICATION_SOUNDS } from './setting-values.ts';
import { allSettings, settingValue } from './settings.ts';
import { VisibilityPolicy, type Draft, type SavedSnippet, type ScheduledMessage, type UserState } from './state.ts';

export const snippetView = (snippet: SavedSnippet) => ({
  id: snippet.id,
  title: snippet.title,
  content: snippet.content,
  date_created: snippet.dateCreated,
});

export const draftView = (draft: Draft) => ({
  id: draft.id,
  type: draft.type,
  to: [...draft.to],
  topic: draft.topic,
  content: draft.content,
  timestamp: draft.timestamp,
});

/** Drafts, oldest edit first (GET /drafts) or newest first (registration). */
export function draftsByTime(state: UserState, order: 'oldest' | 'newest') {
  const sign = order === 'oldest' ? 1 : -1;
  return [...state.drafts.values()].sort((a, b) => sign * (a.timestamp - b.timestamp || a.id - b.id)).map(draftView);
}

/** The ScheduledMessage object: a channel message names its one channel and has a topic; a direct one neither. */
export function scheduledView(message: ScheduledMessage) {
  const common = {
    scheduled_message_id: message.id,
    content: message.content,
    rendered_content: message.renderedContent,
    scheduled_delivery_timestamp: message.deliverAt,
    failed: message.failed,
  };
  return message.type === 'stream'
    ? { ...common, type: 'stream' as const, to: message.to[0]!, topic: message.topic }
    : { ...common, type: 'private' as const, to: [...message.to] };
}

/** Undelivered scheduled messages, failed ones included, soonest first (GET /scheduled_messages, registration). */
export const scheduledByTime = (state: UserState) =>
  [...state.scheduled.values()].filter((message) => message.reminderTargetMessageId === undefined).sort(bySchedule).map(scheduledView);

const bySchedule = (a: ScheduledMessage, b: ScheduledMessage) => a.deliverAt - b.deliverAt || a.id - b.id;

/** The API's reminder object: a direct message to the user itself, about another message. */
export const reminderView = (state: UserState, message: ScheduledMessage) => ({
  reminder_id: message.id,
  type: 'private' as const,
  to: [state.userId],
  content: message.content,
  rendered_content: message.renderedContent,
  scheduled_delivery_timestamp: message.deliverAt,
  failed: message.failed,
  reminder_target_message_id: message.reminderTargetMessageId!,
});

/** Undelivered reminders, failed ones included, soonest first (GET /reminders, registration). */
export const remindersByTime = (state: UserState) =>
  [...state.scheduled.values()].filter((message) => message.reminderTargetMessageId !== undefined).sort(bySchedule).map((message) => reminderView(state, message));

/** The `user_settings` object: every setting, plus the read-only choices clients build their menus from. */
export const userSettingsView = (state: UserState) => ({
  ...allSettings(state.settings),
  available_notification_sounds: [...NOTIFICATION_SOUNDS],
  emojiset_choices: EMOJISET_CHOICES.map((set) => ({ ...set })),
});

/** A user's status as the API shows it: only the keys that are set (an empty object for no status). */
export function statusView(state: UserState): WireSchema<'register_queue_200_response_allOf_user_status'> {
  const view: WireSchema<'register_queue_200_response_allOf_user_status'> = {};
  // `away` is the legacy reading of presence_enabled.
  if (settingValue(state.settings, 'presence_enabled') === false) view.away = true;
  if (state.status.statusText) view.status_text = state.status.statusText;
  // An emoji comes with its type; '' is only the type of no emoji.
  if (state.status.emojiName && state.status.reactionType !== '') {
    view.emoji_name = state.status.emojiName;
    view.emoji_code = state.status.emojiCode;
    view.reaction_type = state.status.reactionType;
  }
  return view;
}

export const mutedUsersView = (state: UserState) => [...state.mutedUsers].map(([id, timestamp]) => ({ id, timestamp }));

/** The `user_topics` list; without `empty_topic_name` a client sees the realm's display name for the empty topic. */
export const userTopicsView = (state: UserState, emptyTopicName: boolean) =>
  [...state.userTopics.values()].map((topic) => ({
    stream_id: topic.streamId,
    topic_name: topic.topicName === '' && !emptyTopicName ? EMPTY_TOPIC_DISPLAY_NAME : topic.topicName,
    last_updated: topic.lastUpdated,
    visibility_policy: topic.visibilityPolicy,
  }));

/** The API's navigation view objects, in the order they were added. */
export const navigationViewsView = (state: UserState) =>
  state.navigationViews.map((view) => ({ fragment: view.fragment, is_pinned: view.isPinned, name: view.name }));

/**
 * The list from before topic policies (feature level 134), of registration's `muted_topics` and the
 * `muted_topics` event: the muted topics as [channel name, topic, UNIX seconds], in channels that still exist.
 */
export const mutedTopicsView = (state: UserState, emptyTopicName: boolean, channelName: (id: number) => string | undefined) =>
  userTopicsView(state, emptyTopicName)
    .filter((topic) => topic.visibility_policy === VisibilityPolicy.muted)
    .flatMap((topic) => {
      const name = channelName(topic.stream_id);
      return name === undefined ? [] : [[name, topic.topic_name, topic.last_updated]];
    });
