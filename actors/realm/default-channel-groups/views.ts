import type { RealmState } from '../state.ts';

/** The API's default channel groups: their channels by id, archived ones left out. */
export const defaultChannelGroupsView = (state: RealmState) =>
  state.defaultChannelGroups.list.map((group) => ({
    id: group.id,
    name: group.name,
    description: group.description,
    streams: group.channelIds.filter((id) => state.channels.get(id)?.isArchived === false),
  }));
