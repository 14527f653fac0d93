import { badRequest } from '../../errors.ts';
import { requireAdmin } from '../administer.ts';
import { channelKey } from '../channels/state.ts';
import type { RealmState } from '../state.ts';
import type { DefaultChannelGroupChange } from './changes.ts';
import type { DefaultChannelGroupCommand } from './commands.ts';
import type { DefaultChannelGroup } from './state.ts';

/** The original's model limits. */
export const MAX_GROUP_NAME_LENGTH = 60;
export const MAX_GROUP_DESCRIPTION_LENGTH = 1024;

/** Groups of default channels are the administrators' to arrange; checked as the original checks them. */
export function decideDefaultChannelGroup(state: RealmState, command: DefaultChannelGroupCommand): DefaultChannelGroupChange[] {
  requireAdmin(state, command.caller);
  const store = state.defaultChannelGroups;
  switch (command.type) {
    case 'default_channel_group.create': {
      if (store.list.length >= command.maxGroups) throw badRequest(`This organization already has ${command.maxGroups} default channel groups, the most it may have`);
      const channelIds = command.channelNames.map((name) => channelIdByName(state, name));
      for (const id of channelIds) {
        const channel = state.channels.get(id)!;
        if (channel.isDefault) throw badRequest(`'${channel.name}' is a default channel and cannot be added to '${command.name}'`);
      }
      checkName(state, command.name);
      checkDescription(command.description);
      return [{ type: 'default_channel_group.created', group: { id: store.nextId, name: command.name, description: command.description, channelIds: [...new Set(channelIds)] } }];
    }
    case 'default_channel_group.update': {
      if (!command.name && !command.description) throw badRequest('You must pass "new_description" or "new_group_name".');
      const group = requireGroup(state, command.id);
      const updated: DefaultChannelGroup = { ...group };
      if (command.name) {
        checkName(state, command.name);
        updated.name = command.name;
      }
      if (command.description) {
        checkDescription(command.description);
        updated.description = command.description;
      }
      return [{ type: 'default_channel_group.updated', group: updated }];
    }
    case 'default_channel_group.channels': {
      const group = requireGroup(state, command.id);
      let channelIds = [...group.channelIds];
      for (const name of command.channelNames) {
        const id = channelIdByName(state, name);
        const channel = state.channels.get(id)!;
        const present = channelIds.includes(id);
        if (command.op === 'add') {
          if (channel.isDefault) throw badRequest(`'${channel.name}' is a default channel and cannot be added to '${group.name}'`);
          if (present) throw badRequest(`Channel '${channel.name}' is already present in default channel group '${group.name}'`);
          channelIds.push(id);
        } else {
          if (!present) throw badRequest(`Channel '${channel.name}' is not present in default channel group '${group.name}'`);
          channelIds = channelIds.filter((other) => other !== id);
        }
      }
      return [{ type: 'default_channel_group.updated', group: { ...group, channelIds } }];
    }
    case 'default_channel_group.delete':
      requireGroup(state, command.id);
      return [{ type: 'default_channel_group.deleted', id: command.id }];
  }
}

function requireGroup(state: RealmState, id: number): DefaultChannelGroup {
  const group = state.defaultChannelGroups.list.find((candidate) => candidate.id === id);
  if (!group) throw badRequest(`Default channel group with id '${id}' does not exist.`);
  return group;
}

/** A channel the group may hold: an existing, unarchived one, named as POST /users/me/subscriptions names them. */
function channelIdByName(state: RealmState, name: string): number {
  const id = state.channelIdByName.get(channelKey(name));
  if (id === undefined || state.channels.get(id)!.isArchived) throw badRequest(`Invalid channel name '${name}'`);
  return id;
}

function checkName(state: RealmState, name: string): void {
  if (name.trim() === '') throw badRequest(`Invalid default channel group name '${name}'`);
  if (name.length > MAX_GROUP_NAME_LENGTH) throw badRequest(`Default channel group name too long (limit: ${MAX_GROUP_NAME_LENGTH} characters)`);
  if (name.includes('\0')) throw badRequest(`Default channel group name '${name}' contains NULL (0x00) characters.`);
  if (state.defaultChannelGroups.list.some((group) => group.name === name)) throw badRequest(`Default channel group '${name}' already exists`);
}

function checkDescription(description: string): void {
  if (description.length > MAX_GROUP_DESCRIPTION_LENGTH) {
    throw badRequest(`description is too long (limit: ${MAX_GROUP_DESCRIPTION_LENGTH} characters)`);
  }
}
