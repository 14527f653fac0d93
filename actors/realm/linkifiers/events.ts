import type { WireEventOf } from '../../wire/events.ts';
import type { ApiEvent } from '../../events.ts';
import type { RealmState } from '../state.ts';
import { linkifiersView } from './views.ts';

/** Every change sends the whole list (queues without `linkifier_url_template` never get it: queue/capabilities.ts). */
export const linkifierEvents = (state: RealmState): ApiEvent[] => [{ type: 'realm_linkifiers', realm_linkifiers: linkifiersView(state.linkifiers) } satisfies WireEventOf<'realm_linkifiers'>];
