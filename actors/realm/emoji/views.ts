import type { WireSchema } from '../../wire/events.ts';
import type { RealmState } from '../state.ts';
import type { RealmEmoji } from './state.ts';

/** Where the realm's emoji images are served (src/routes/emoji.ts), relative to the realm's URL. */
export const emojiImagePath = (realmId: number, fileName: string) => `/user_avatars/${realmId}/emoji/images/${fileName}`;
export const emojiStillPath = (realmId: number, fileName: string) => `/user_avatars/${realmId}/emoji/images/still/${fileName}`;

export function emojiView(realmId: number, emoji: RealmEmoji): WireSchema<'RealmEmoji'> {
  return {
    id: String(emoji.id),
    name: emoji.name,
    source_url: emojiImagePath(realmId, emoji.fileName),
    still_url: emoji.stillFileName === null ? null : emojiStillPath(realmId, emoji.stillFileName),
    deactivated: emoji.deactivated,
    author_id: emoji.authorId,
  };
}

/** Every custom emoji, deactivated ones too, keyed by id: GET /realm/emoji, registration and events. */
export function realmEmojiView(state: RealmState): Record<string, WireSchema<'RealmEmoji'>> {
  const out: Record<string, WireSchema<'RealmEmoji'>> = {};
  for (const emoji of state.emoji.byId.values()) out[String(emoji.id)] = emojiView(state.realmId, emoji);
  return out;
}
