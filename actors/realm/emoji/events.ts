import type { ApiEvent } from '../../events.ts';
import type { WireEventOf } from '../../wire/events.ts';
import type { RealmState } from '../state.ts';
import { realmEmojiView } from './views.ts';

/** Every change sends the whole set, deactivated emoji included, as the original does. */
export const emojiEvents = (state: RealmState): ApiEvent[] => [{ type: 'realm_emoji', op: 'update', realm_emoji: realmEmojiView(state) } satisfies WireEventOf<'realm_emoji', 'update'>];
