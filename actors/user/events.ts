import type { ApiEvent, Delivery } from '../events.ts';
import type { UserChange } from './changes.ts';
import { onboardingStepsView } from './onboarding.ts';
import { LANGUAGES } from './setting-values.ts';
import type { UserState } from './state.ts';
import type { WireEventOf } from '../wire/events.ts';
import { draftView, mutedTopicsView, mutedUsersView, reminderView, scheduledView, snippetView } from './views.ts';

/** What personal events need to know of the realm. */
export interface RealmFacts {
  /** a channel's name, which the legacy `muted_topics` list names */
  channelName(id: number): string | undefined;
  /** the active human administrators, who are told of export consents */
  administrators(): number[];
}

/** The events a personal change announces: to the user's own queues, except a status, which all may see. */
export function userEvents(state: UserState, change: UserChange, realm: RealmFacts): Delivery[] {
  const toSelf = (event: ApiEvent): Delivery[] => [
    { realmId: state.realmId, audience: { kind: 'users', userIds: [state.userId] }, event },
  ];
  switch (change.type) {
    case 'snippet.created':
    case 'snippet.edited': {
      const snippet = state.snippets.get(change.type === 'snippet.created' ? change.snippet.id : change.id);
      if (!snippet) return [];
      return toSelf({ type: 'saved_snippets', op: change.type === 'snippet.created' ? 'add' : 'update', saved_snippet: snippetView(snippet) } satisfies WireEventOf<'saved_snippets', 'add' | 'update'>);
    }
    case 'snippet.deleted':
      return toSelf({ type: 'saved_snippets', op: 'remove', saved_snippet_id: change.id } satisfies WireEventOf<'saved_snippets', 'remove'>);
    case 'draft.created':
      return toSelf({ type: 'drafts', op: 'add', drafts: change.drafts.map(draftView) } satisfies WireEventOf<'drafts', 'add'>);
    case 'draft.edited':
      return toSelf({ type: 'drafts', op: 'update', draft: draftView(change.draft) } satisfies WireEventOf<'drafts', 'update'>);
    case 'draft.deleted':
      return toSelf({ type: 'drafts', op: 'remove', draft_id: change.id } satisfies WireEventOf<'drafts', 'remove'>);
    case 'scheduled.created':
      if (change.message.reminderTargetMessageId !== undefined) return toSelf({ type: 'reminders', op: 'add', reminders: [reminderView(state, change.message)] } satisfies WireEventOf<'reminders', 'add'>);
      return toSelf({ type: 'scheduled_messages', op: 'add', scheduled_messages: [scheduledView(change.message)] } satisfies WireEventOf<'scheduled_messages', 'add'>);
    case 'scheduled.edited':
    case 'scheduled.failed': {
      const message = state.scheduled.get(change.type === 'scheduled.edited' ? change.message.id : change.id);
      // A reminder that failed stays listed, failed: its events have no update (clients see it at registration).
      if (message?.reminderTargetMessageId !== undefined) return [];
      return message ? toSelf({ type: 'scheduled_messages', op: 'update', scheduled_message: scheduledView(message) } satisfies WireEventOf<'scheduled_messages', 'update'>) : [];
    }
    case 'scheduled.deleted':
    case 'scheduled.delivered':
      if (change.reminder) return toSelf({ type: 'reminders', op: 'remove', reminder_id: change.id } satisfies WireEventOf<'reminders', 'remove'>);
      return toSelf({ type: 'scheduled_messages', op: 'remove', scheduled_message_id: change.id } satisfies WireEventOf<'scheduled_messages', 'remove'>);
    case 'setting.changed': {
      const event: WireEventOf<'user_settings'> = { type: 'user_settings', op: 'update', property: change.name, value: change.value };
      if (change.name === 'default_language') event.language_name = LANGUAGES.get(String(change.value)) ?? '';
      if (change.name !== 'allow_private_data_export') return toSelf(event);
      return [...toSelf(event), ...exportConsentDeliveries(state.realmId, realm.administrators(), state.userId, change.value === true)];
    }
    case 'alert_words.changed':
      return toSelf({ type: 'alert_words', alert_words: [...change.words] } satisfies WireEventOf<'alert_words'>);
    case 'status.changed':
      return [{ realmId: state.realmId, audience: { kind: 'realm' }, event: statusEvent(state.userId, change) }];
    case 'user.muted':
    case 'user.unmuted':
      return toSelf({ type: 'muted_users', muted_users: mutedUsersView(state) } satisfies WireEventOf<'muted_users'>);
    // The legacy whole list too, which queues that asked for `user_topic` do not get (queue/capabilities.ts).
    case 'user_topic.changed':
      return [
        ...toSelf({ type: 'user_topic', stream_id: change.streamId, topic_name: change.topicName, last_updated: change.at, visibility_policy: change.policy } satisfies WireEventOf<'user_topic'>),
        ...toSelf({ type: 'muted_topics', muted_topics: mutedTopicsView(state, false, (id) => realm.channelName(id)) } satisfies WireEventOf<'muted_topics'>),
      ];
    case 'navigation_view.added':
      return toSelf({ type: 'navigation_view', op: 'add', navigation_view: { fragment: change.view.fragment, is_pinned: change.view.isPinned, name: change.view.name } } satisfies WireEventOf<'navigation_view', 'add'>);
    case 'navigation_view.updated': {
      const data: WireEventOf<'navigation_view', 'update'>['data'] = {};
      if (change.isPinned !== undefined) data.is_pinned = change.isPinned;
      if (change.name !== undefined) data.name = change.name;
      return toSelf({ type: 'navigation_view', op: 'update', fragment: change.fragment, data });
    }
    case 'navigation_view.removed':
      return toSelf({ type: 'navigation_view', op: 'remove', fragment: change.fragment } satisfies WireEventOf<'navigation_view', 'remove'>);
    case 'onboarding_step.seen':
      return toSelf({ type: 'onboarding_steps', onboarding_steps: onboardingStepsView(state) } satisfies WireEventOf<'onboarding_steps'>);
    case 'push_device.changed':
      return toSelf({ type: 'push_device', push_account_id: String(change.device.pushAccountId), status: change.device.status, error_code: change.device.errorCode } satisfies WireEventOf<'push_device'>);
    // The original's event name, as clients know it (the registration's key is the neutral `has_video_token`).
    case 'video_token.changed':
      return toSelf({ type: 'has_zoom_token', value: change.token !== null } satisfies WireEventOf<'has_zoom_token'>);
    // Dropping drafts when sync is turned off is silent: clients keep their local copies.
    case 'drafts.cleared':
    case 'email.change_requested':
    case 'email.change_confirmed':
    case 'push_token.added':
    case 'push_token.removed':
      return [];
  }
}

/** Carries only what the request changed, as the original's event does. */
function statusEvent(userId: number, change: Extract<UserChange, { type: 'status.changed' }>): WireEventOf<'user_status'> {
  const event: WireEventOf<'user_status'> = { type: 'user_status', user_id: userId };
  if (change.away !== undefined) event.away = change.away;
  if (change.status.statusText !== undefined) event.status_text = change.status.statusText;
  if (change.status.emojiName !== undefined) {
    event.emoji_name = change.status.emojiName;
    event.emoji_code = change.status.emojiCode;
    event.reaction_type = change.status.reactionType;
  }
  return event;
}

/** `realm_export_consent`: administrators learn whether a user lets them export its private data. */
export function exportConsentDeliveries(realmId: number, administrators: number[], userId: number, consented: boolean): Delivery[] {
  return administrators.length ? [{ realmId, audience: { kind: 'users', userIds: administrators }, event: { type: 'realm_export_consent', user_id: userId, consented } satisfies WireEventOf<'realm_export_consent'> }] : [];
}
