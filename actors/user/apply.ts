import type { UserChange } from './changes.ts';
import { userTopicKey, type UserState } from './state.ts';

/** Applies one fact to a user's state, in place; the same code runs live and during log replay. */
export function applyUserChange(state: UserState, change: UserChange): void {
  switch (change.type) {
    case 'snippet.created':
      state.snippets.set(change.snippet.id, { ...change.snippet });
      state.nextSnippetId = Math.max(state.nextSnippetId, change.snippet.id + 1);
      return;
    case 'snippet.edited': {
      const snippet = state.snippets.get(change.id);
      if (!snippet) return;
      if (change.title !== undefined) snippet.title = change.title;
      if (change.content !== undefined) snippet.content = change.content;
      return;
    }
    case 'snippet.deleted':
      state.snippets.delete(change.id);
      return;
    case 'draft.created':
      for (const draft of change.drafts) {
        state.drafts.set(draft.id, { ...draft, to: [...draft.to] });
        state.nextDraftId = Math.max(state.nextDraftId, draft.id + 1);
      }
      return;
    case 'draft.edited':
      if (state.drafts.has(change.draft.id)) state.drafts.set(change.draft.id, { ...change.draft, to: [...change.draft.to] });
      return;
    case 'draft.deleted':
      state.drafts.delete(change.id);
      return;
    case 'drafts.cleared':
      // Ids are not reused: nextDraftId stays where it is.
      state.drafts.clear();
      return;
    case 'scheduled.created':
      state.scheduled.set(change.message.id, { ...change.message, to: [...change.message.to] });
      state.nextScheduledId = Math.max(state.nextScheduledId, change.message.id + 1);
      return;
    case 'scheduled.edited':
      if (state.scheduled.has(change.message.id)) state.scheduled.set(change.message.id, { ...change.message, to: [...change.message.to] });
      return;
    case 'scheduled.deleted':
    case 'scheduled.delivered':
      state.scheduled.delete(change.id);
      return;
    case 'scheduled.failed': {
      const message = state.scheduled.get(change.id);
      if (message) message.failed = true;
      return;
    }
    case 'setting.changed':
      state.settings[change.name] = change.value;
      return;
    case 'email.change_requested':
      state.pendingEmailChange = { ...change.pending };
      return;
    case 'email.change_confirmed':
      state.pendingEmailChange = null;
      return;
    case 'push_token.added':
      state.pushTokens.set(change.token.token, { ...change.token });
      return;
    case 'push_token.removed':
      state.pushTokens.delete(change.token);
      return;
    case 'push_device.changed':
      state.pushDevices = [...state.pushDevices.filter((device) => device.pushAccountId !== change.device.pushAccountId), { ...change.device }];
      return;
    case 'video_token.changed':
      state.videoToken = change.token && { ...change.token };
      return;
    case 'alert_words.changed':
      state.alertWords = [...change.words];
      return;
    case 'status.changed':
      Object.assign(state.status, change.status);
      return;
    case 'user.muted':
      state.mutedUsers.set(change.mutedUserId, change.at);
      return;
    case 'user.unmuted':
      state.mutedUsers.delete(change.mutedUserId);
      return;
    case 'user_topic.changed': {
      const key = userTopicKey(change.streamId, change.topicName);
      if (change.policy === 0) state.userTopics.delete(key);
      // A later spelling of the same topic replaces the earlier one, keeping its place.
      else state.userTopics.set(key, { streamId: change.streamId, topicName: change.topicName, lastUpdated: change.at, visibilityPolicy: change.policy });
      return;
    }
    case 'navigation_view.added':
      state.navigationViews = [...state.navigationViews, { ...change.view }];
      return;
    case 'navigation_view.updated': {
      const { isPinned, name } = change;
      state.navigationViews = state.navigationViews.map((view) =>
        view.fragment === change.fragment ? { ...view, ...(isPinned === undefined ? {} : { isPinned }), ...(name === undefined ? {} : { name }) } : view);
      return;
    }
    case 'navigation_view.removed':
      state.navigationViews = state.navigationViews.filter((view) => view.fragment !== change.fragment);
      return;
    case 'onboarding_step.seen':
      state.onboardingStepsSeen = [...state.onboardingStepsSeen, change.name];
      return;
  }
}
