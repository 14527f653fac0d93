import { badRequest, ChatError, ErrorCode } from '../../errors.ts';
import type { Caller } from '../commands.ts';
import { emojiCodeOf, MAX_EMOJI_NAME_LENGTH } from '../messages/emoji.ts';
import { allowed } from '../permissions.ts';
import { isAdmin, Role, type RealmState, type UserProfile } from '../state.ts';
import type { EmojiChange } from './changes.ts';
import type { EmojiCommand } from './commands.ts';
import { activeEmoji } from './state.ts';
import { requireRealmRoom, type RealmLimits } from '../limits.ts';

export function decideEmoji(state: RealmState, command: EmojiCommand, limits: RealmLimits): EmojiChange[] {
  const caller = callerUser(state, command.caller);
  switch (command.type) {
    case 'emoji.add': {
      const name = checkEmojiUpload(state, caller, command.name, limits.customEmoji);
      return [{
        type: 'emoji.added',
        emoji: { id: state.emoji.nextId, name, fileName: command.fileName, stillFileName: command.stillFileName, authorId: caller.userId, deactivated: false },
      }];
    }
    case 'emoji.deactivate': {
      const emoji = activeEmoji(state.emoji, command.name);
      if (!emoji) throw new ChatError(ErrorCode.BAD_REQUEST, `Emoji '${command.name}' does not exist`, 404);
      if (!isAdmin(caller) && emoji.authorId !== caller.userId) throw badRequest('Must be an organization administrator or emoji author');
      return [{ type: 'emoji.deactivated', id: emoji.id }];
    }
  }
}

/**
 * May this user add an emoji of this name? Returns the name as stored (spaces become underscores). The
 * front end asks before it stores the image; deciding asks again.
 */
export function checkEmojiUpload(state: RealmState, user: UserProfile, requested: string, maxEmoji: number): string {
  if (user.role === Role.guest) throw badRequest('Not allowed for guest users');
  const name = requested.trim().replace(/ /g, '_');
  checkEmojiName(name);
  if (!allowed(state, 'can_add_custom_emoji_group', user.userId)) throw badRequest('Insufficient permission');
  if (activeEmoji(state.emoji, name)) throw badRequest('A custom emoji with this name already exists.');
  // Deactivated ones count: they are kept, for the messages and reactions that show them.
  requireRealmRoom('custom emoji', state.emoji.byId.size, maxEmoji);
  // A custom emoji replaces the built-in one of its name for the whole organization.
  if ((emojiCodeOf(name) !== undefined || name === 'zulip') && !isAdmin(user)) throw badRequest('Only administrators can override default emoji.');
  return name;
}

function checkEmojiName(name: string): void {
  if (!name) throw badRequest('Emoji name is missing');
  if (name.length > MAX_EMOJI_NAME_LENGTH) throw badRequest(`Emoji name is too long (limit: ${MAX_EMOJI_NAME_LENGTH} characters)`);
  if (/^[0-9a-z_-]+$/.test(name)) {
    if (/[-_]$/.test(name)) throw badRequest('Emoji names must end with either a letter or digit.');
    return;
  }
  throw badRequest('Emoji names must contain only lowercase English letters, digits, spaces, dashes, and underscores.');
}

function callerUser(state: RealmState, caller: Caller): UserProfile {
  const user = caller.kind === 'user' ? state.users.get(caller.userId) : undefined;
  if (!user || !user.isActive) throw badRequest('Custom emoji are managed by users');
  return user;
}
