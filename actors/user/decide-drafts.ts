import { badRequest, ChatError, ErrorCode } from '../errors.ts';
import { requireChannel } from '../realm/channels/decide.ts';
import { canSeeChannel } from '../realm/channels/views.ts';
import type { Clock } from '../realm/decide.ts';
import { displayEmail } from '../realm/email-visibility.ts';
import type { RealmState } from '../realm/state.ts';
import { findAccessibleUser } from '../realm/user-access.ts';
import { LIMITS } from '../register/realm-limits.ts';
import type { UserChange } from './changes.ts';
import type { DraftInput, UserCommand } from './commands.ts';
import { settingValue } from './settings.ts';
import type { Draft, UserState } from './state.ts';
import { requireRoom } from './limits.ts';

type DraftCommand = Extract<UserCommand, { type: 'draft.create' | 'draft.edit' | 'draft.delete' }>;

/** Drafts: created in bulk, replaced whole on edit, refused while the user has turned sync off. */
export function decideDrafts(state: UserState, command: DraftCommand, clock: Clock, maxDrafts: number): UserChange[] {
  // The recipients first: the original checks them as it reads the request.
  if (command.type === 'draft.create') for (const input of command.drafts) requireRecipients(command.realm, state.userId, input);
  if (command.type === 'draft.edit') requireRecipients(command.realm, state.userId, command.draft);
  requireSync(state);
  switch (command.type) {
    case 'draft.create': {
      requireRoom('drafts', state.drafts.size, command.drafts.length, maxDrafts);
      const drafts = command.drafts.map((input, index) => ({ id: state.nextDraftId + index, ...normalizeDraft(state, input, clock) }));
      return drafts.length > 0 ? [{ type: 'draft.created', drafts }] : [];
    }
    case 'draft.edit':
      requireDraft(state, command.id);
      return [{ type: 'draft.edited', draft: { id: command.id, ...normalizeDraft(state, command.draft, clock) } }];
    case 'draft.delete':
      requireDraft(state, command.id);
      return [{ type: 'draft.deleted', id: command.id }];
  }
}

/**
 * A channel draft's channel must be one the user can see; direct-message recipients must be users of the
 * realm who still use it. (The count of channel IDs is checked with the rest of the draft.)
 */
function requireRecipients(realm: RealmState, userId: number, input: DraftInput): void {
  if (input.type === 'stream' && input.to.length === 1) {
    const channel = requireChannel(realm, input.to[0]!);
    if (!canSeeChannel(realm, channel, userId)) throw badRequest('Invalid channel ID');
  }
  if (input.type === 'private') {
    for (const id of input.to) {
      // A limited guest names only users it may access (realm/user-access.ts).
      const recipient = findAccessibleUser(realm, userId, id);
      if (!recipient) throw badRequest(`Invalid user ID ${id}`);
      if (!recipient.isActive) throw badRequest(`'${displayEmail(realm, recipient)}' is no longer using Zulip.`);
    }
  }
}

export function requireSync(state: UserState): void {
  if (settingValue(state.settings, 'enable_drafts_synchronization') !== true) {
    throw badRequest('User has disabled synchronizing drafts.');
  }
}

function requireDraft(state: UserState, id: number): void {
  if (!state.drafts.has(id)) throw new ChatError(ErrorCode.BAD_REQUEST, 'Draft does not exist', 404);
}

/** The original's rules: trimmed non-empty content, a truncated topic for channels, recipients as stored. */
function normalizeDraft(state: UserState, input: DraftInput, clock: Clock): Omit<Draft, 'id'> {
  const content = normalizeContent(input.content);
  const timestamp = input.timestamp ?? clock.now() / 1000;
  if (timestamp < 0) throw badRequest('Timestamp must not be negative.');
  const at = Math.floor(timestamp);
  if (input.type === 'stream') {
    const topic = truncate(input.topic, LIMITS.max_topic_length, '...');
    if (topic.includes('\0')) throw badRequest('Topic must not contain null bytes');
    if (input.to.length !== 1) throw badRequest('Must specify exactly 1 channel ID for channel messages');
    return { type: 'stream', to: [input.to[0]!], topic, content, timestamp: at };
  }
  // A direct draft without recipients yet is stored unaddressed, and reads back as such (as in the original).
  if (input.type === 'private' && input.to.length > 0) {
    return { type: 'private', to: directRecipients(state.userId, input.to), topic: '', content, timestamp: at };
  }
  return { type: '', to: [], topic: '', content, timestamp: at };
}

function normalizeContent(raw: string): string {
  const content = raw.trimEnd().replace(/^\n+/, '');
  if (content.length === 0) throw badRequest('Message must not be empty');
  if (content.includes('\0')) throw badRequest('Message must not contain null bytes');
  return truncate(content, LIMITS.max_message_length, '\n[message truncated]');
}

function truncate(text: string, max: number, marker: string): string {
  return text.length > max ? text.slice(0, max - marker.length) + marker : text;
}

/** The conversation's other participants, sorted; a draft to oneself keeps the own ID. */
function directRecipients(self: number, to: number[]): number[] {
  const ids = [...new Set(to)].sort((a, b) => a - b);
  const others = ids.filter((id) => id !== self);
  return others.length > 0 ? others : [self];
}
