import { channelFoldersView } from '../../realm/channel-folders/views.ts';
import type { WireRegisterKeys } from '../../wire/events.ts';
import type { Builder } from '../builder.ts';

/** fetch type `channel_folders`: the realm's channel folders in display order, archived ones included. */
export const channelFoldersState: Builder = ({ realm }) => ({ channel_folders: channelFoldersView(realm.channelFolders, true) }) satisfies WireRegisterKeys<'channel_folders'>;
