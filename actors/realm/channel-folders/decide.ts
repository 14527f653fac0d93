import { badRequest } from '../../errors.ts';
import { renderMarkdown } from '../../markdown.ts';
import { LIMITS } from '../../register/realm-limits.ts';
import type { Clock } from '../decide.ts';
import { requireAdmin } from '../administer.ts';
import { disallowedNameCharacter } from '../names.ts';
import type { RealmState } from '../state.ts';
import type { ChannelFolderChange, ChannelFolderFields } from './changes.ts';
import type { ChannelFolderCommand } from './commands.ts';

/** Folders are the administrators' to arrange; checked as the original checks them. */
export function decideChannelFolder(state: RealmState, command: ChannelFolderCommand, clock: Clock): ChannelFolderChange[] {
  const caller = requireAdmin(state, command.caller);
  const store = state.channelFolders;
  switch (command.type) {
    case 'channel_folder.create': {
      if (store.list.length >= command.maxFolders) throw badRequest(`This organization already has ${command.maxFolders} channel folders, the most it may have`);
      checkName(state, command.name);
      checkDescription(command.description);
      return [{
        type: 'channel_folder.created',
        folder: {
          id: store.nextId, name: command.name, description: command.description, renderedDescription: renderMarkdown(command.description),
          dateCreated: Math.floor(clock.now() / 1000), creatorId: caller?.userId ?? null, isArchived: false,
        },
      }];
    }
    case 'channel_folder.update': {
      const folder = store.list.find((candidate) => candidate.id === command.id);
      if (!folder) throw badRequest('Invalid channel folder ID');
      const fields: ChannelFolderFields = {};
      if (command.name !== undefined && command.name !== folder.name) {
        checkName(state, command.name);
        fields.name = command.name;
      }
      if (command.description !== undefined && command.description !== folder.description) {
        checkDescription(command.description);
        fields.description = command.description;
        fields.renderedDescription = renderMarkdown(command.description);
      }
      if (command.isArchived !== undefined && command.isArchived !== folder.isArchived) {
        if (command.isArchived && [...state.channels.values()].some((channel) => channel.folderId === folder.id && !channel.isArchived)) {
          throw badRequest('You need to remove all the channels from this folder to archive it.');
        }
        fields.isArchived = command.isArchived;
      }
      return Object.keys(fields).length ? [{ type: 'channel_folder.updated', id: folder.id, fields }] : [];
    }
    case 'channel_folders.reorder': {
      const ids = new Set(command.order);
      if (ids.size !== command.order.length || ids.size !== store.list.length || store.list.some((folder) => !ids.has(folder.id))) {
        throw badRequest('Invalid order mapping');
      }
      return [{ type: 'channel_folders.reordered', order: [...command.order] }];
    }
  }
}

/** The folder a channel is put in: an unarchived one of the realm (null takes it out of its folder). */
export function checkFolderForChannel(state: RealmState, folderId: number | null): void {
  if (folderId === null) return;
  const folder = state.channelFolders.list.find((candidate) => candidate.id === folderId);
  if (!folder || folder.isArchived) throw badRequest('Invalid channel folder ID');
}

function checkName(state: RealmState, name: string): void {
  if (name.trim() === '') throw badRequest("Channel folder name can't be empty.");
  if (name.length > LIMITS.max_channel_folder_name_length) {
    throw badRequest(`name is too long (limit: ${LIMITS.max_channel_folder_name_length} characters)`);
  }
  const invalid = disallowedNameCharacter(name);
  if (invalid >= 0) throw badRequest(`Invalid character in channel folder name, at position ${invalid + 1}.`);
  const lower = name.toLowerCase();
  if (state.channelFolders.list.some((folder) => folder.name.toLowerCase() === lower)) throw badRequest('Channel folder name already in use');
}

function checkDescription(description: string): void {
  if (description.length > LIMITS.max_channel_folder_description_length) {
    throw badRequest(`description is too long (limit: ${LIMITS.max_channel_folder_description_length} characters)`);
  }
}
