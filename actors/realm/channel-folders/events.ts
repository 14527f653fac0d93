import type { WireEventOf } from '../../wire/events.ts';
import type { ApiEvent } from '../../events.ts';
import type { RealmState } from '../state.ts';
import type { ChannelFolderChange } from './changes.ts';
import { channelFolderView } from './views.ts';

/** `channel_folder` events, for everyone in the realm (archived folders included, as in the original). */
export function channelFolderEvents(state: RealmState, change: ChannelFolderChange): ApiEvent[] {
  switch (change.type) {
    case 'channel_folder.created': {
      const order = state.channelFolders.list.findIndex((folder) => folder.id === change.folder.id);
      return order < 0 ? [] : [{ type: 'channel_folder', op: 'add', channel_folder: channelFolderView(state.channelFolders.list[order]!, order) } satisfies WireEventOf<'channel_folder', 'add'>];
    }
    case 'channel_folder.updated': {
      const { name, description, renderedDescription, isArchived } = change.fields;
      const data: Record<string, unknown> = {};
      if (name !== undefined) data.name = name;
      if (description !== undefined) Object.assign(data, { description, rendered_description: renderedDescription });
      if (isArchived !== undefined) data.is_archived = isArchived;
      return [{ type: 'channel_folder', op: 'update', channel_folder_id: change.id, data }];
    }
    case 'channel_folders.reordered':
      return [{ type: 'channel_folder', op: 'reorder', order: [...change.order] }];
  }
}
