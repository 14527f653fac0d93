import { realmEmojiView } from '../../realm/emoji/views.ts';
import type { WireRegisterKeys } from '../../wire/events.ts';
import type { Builder } from '../builder.ts';

/** fetch type `realm_emoji`: every custom emoji of the realm, deactivated ones too, by id. */
export const realmEmojiState: Builder = ({ realm }) => ({ realm_emoji: realmEmojiView(realm) }) satisfies WireRegisterKeys<'realm_emoji'>;
