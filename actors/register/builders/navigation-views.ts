import { navigationViewsView } from '../../user/views.ts';
import type { WireRegisterKeys } from '../../wire/events.ts';
import type { Builder } from '../builder.ts';

/** fetch type `navigation_views`: the caller's saved left-sidebar views. */
export const navigationViewsState: Builder = ({ personal }) => ({ navigation_views: navigationViewsView(personal) }) satisfies WireRegisterKeys<'navigation_views'>;
