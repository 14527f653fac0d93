import type { ApiEvent } from '../../events.ts';
import type { RealmState } from '../state.ts';
import type { WireEventOf } from '../../wire/events.ts';
import { playgroundsView } from './views.ts';

/** Every change sends the whole list, as the original does. */
export const playgroundEvents = (state: RealmState): ApiEvent[] => [{ type: 'realm_playgrounds', realm_playgrounds: playgroundsView(state.playgrounds) } satisfies WireEventOf<'realm_playgrounds'>];
