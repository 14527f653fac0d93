import { defaultChannelGroupsView } from '../../realm/default-channel-groups/views.ts';
import type { WireRegisterKeys } from '../../wire/events.ts';
import type { Builder } from '../builder.ts';

/** fetch type `default_stream_groups`: the groups of default channels offered together (none for a spectator). */
export const defaultStreamGroupsState: Builder = ({ realm, spectator }) => ({ realm_default_stream_groups: spectator ? [] : defaultChannelGroupsView(realm) }) satisfies WireRegisterKeys<'realm_default_stream_groups'>;
