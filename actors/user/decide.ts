import { ChatError, ErrorCode, badRequest } from '../errors.ts';
import type { Clock } from '../realm/decide.ts';
import type { UserChange } from './changes.ts';
import type { UserCommand } from './commands.ts';
import { decideDrafts } from './decide-drafts.ts';
import { decideNavigationView } from './decide-navigation-views.ts';
import { decideOnboardingStep } from './onboarding.ts';
import { decideAddAlertWords, decideAddToken, decideMute, decideRemoveAlertWords, decideRemoveToken, decideStatus, decideUnmute } from './decide-personal.ts';
import { decideScheduled } from './decide-scheduled.ts';
import { decideSettings } from './decide-settings.ts';
import { decideUserTopic } from './decide-topics.ts';
import { decideConfirmEmailChange, decideEmailChange } from './email-change.ts';
import type { UserState } from './state.ts';
import { decidePushDeviceStatus, decideRegisterPushDevice } from './push-e2ee.ts';
import { DEFAULT_PERSONAL_LIMITS, requireRoom, type PersonalLimits } from './limits.ts';
import { LIMITS } from '../register/realm-limits.ts';

/**
 * Validates a command against the user's state and returns the facts it produces; never mutates. `limits`:
 * how many of each kind the user may keep.
 */
export function decideUser(state: UserState, command: UserCommand, clock: Clock, limits: PersonalLimits = DEFAULT_PERSONAL_LIMITS): UserChange[] {
  switch (command.type) {
    case 'snippet.create':
      requireText('Title', command.title, MAX_SNIPPET_TITLE_LENGTH);
      requireText('Content', command.content, LIMITS.max_message_length);
      requireRoom('saved snippets', state.snippets.size, 1, limits.savedSnippets);
      return [{
        type: 'snippet.created',
        snippet: { id: state.nextSnippetId, title: command.title, content: command.content, dateCreated: Math.floor(clock.now() / 1000) },
      }];
    case 'snippet.edit': {
      requireSnippet(state, command.id);
      if (command.title !== undefined) requireText('Title', command.title, MAX_SNIPPET_TITLE_LENGTH);
      if (command.content !== undefined) requireText('Content', command.content, LIMITS.max_message_length);
      if (command.title === undefined && command.content === undefined) throw badRequest('Either title or content must be provided.');
      return [{ type: 'snippet.edited', id: command.id, title: command.title, content: command.content }];
    }
    case 'snippet.delete':
      requireSnippet(state, command.id);
      return [{ type: 'snippet.deleted', id: command.id }];
    case 'draft.create':
    case 'draft.edit':
    case 'draft.delete':
      return decideDrafts(state, command, clock, limits.drafts);
    case 'scheduled.create':
    case 'scheduled.edit':
    case 'scheduled.delete':
    case 'scheduled.fail':
    case 'reminder.create':
    case 'reminder.delete':
      return decideScheduled(state, command, clock, limits.scheduledMessages);
    case 'settings.update':
      return decideSettings(state, command.settings);
    case 'email.request_change':
      return decideEmailChange(state, command.realm, command.newEmail, clock);
    case 'email.confirm_change':
      return decideConfirmEmailChange(state, command.token, clock);
    case 'push_token.add':
      return decideAddToken(state, command.token, command.appid, clock, limits.pushTokens);
    case 'push_token.remove':
      return decideRemoveToken(state, command.token);
    case 'alert_words.add':
      return decideAddAlertWords(state, command.words, limits.alertWords);
    case 'alert_words.remove':
      return decideRemoveAlertWords(state, command.words);
    case 'status.update':
      return decideStatus(state, command.status, command.by);
    case 'user.mute':
      return decideMute(state, command.realm, command.mutedUserId, clock);
    case 'user.unmute':
      return decideUnmute(state, command.realm, command.mutedUserId);
    case 'user_topic.set':
      return decideUserTopic(state, command, clock, limits.topicPolicies);
    case 'navigation_view.add':
    case 'navigation_view.update':
    case 'navigation_view.remove':
      return decideNavigationView(state, command);
    case 'onboarding_step.mark_seen':
      return decideOnboardingStep(state, command.name);
    case 'push_device.register':
      return decideRegisterPushDevice(state, command);
    case 'push_device.set_status':
      return decidePushDeviceStatus(state, command.pushAccountId, command.pushPublicKey, command.status, command.errorCode);
    case 'video_token.set':
      // Only a change of whether there is one is news to clients; a refreshed token is stored silently.
      return [{ type: 'video_token.changed', token: command.token }];
  }
}

// The original's SavedSnippet.MAX_TITLE_LENGTH; the content is bounded as a message's.
const MAX_SNIPPET_TITLE_LENGTH = 60;

function requireText(what: string, text: string, maxLength: number): void {
  if (text.trim() === '') throw badRequest(`${what} cannot be empty.`);
  if (text.length > maxLength) throw badRequest(`${what} is too long (limit: ${maxLength} characters)`);
}

function requireSnippet(state: UserState, id: number): void {
  if (!state.snippets.has(id)) throw new ChatError(ErrorCode.BAD_REQUEST, 'Saved snippet does not exist.', 404);
}
