import { badRequest, ChatError, ErrorCode } from '../../errors.ts';
import { newApiKey } from '../../ids.ts';
import type { RealmChange } from '../changes.ts';
import { channelKey } from '../channels/state.ts';
import { canSeeChannel } from '../channels/views.ts';
import type { DecideContext } from '../decide.ts';
import { newAccountBasics } from '../new-user.ts';
import { checkFullName } from '../names.ts';
import { allowed } from '../permissions.ts';
import { findUserByEmail, Role, type RealmState, type UserProfile } from '../state.ts';
import type { BotChange } from './changes.ts';
import type { BotCommand } from './commands.ts';
import { activeBotsByOwner, BotType, CREATABLE_BOT_TYPES, SERVICE_INTERFACES, type BotProfile, type BotService } from './state.ts';
import { administers, asBot } from './views.ts';

type Command<T extends BotCommand['type']> = Extract<BotCommand, { type: T }>;

const insufficient = () => new ChatError(ErrorCode.UNAUTHORIZED_PRINCIPAL, 'Insufficient permission');

/** The local part of an email address (dot-atom). */
const EMAIL_LOCAL_PART = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;

export function decideBot(state: RealmState, command: BotCommand, context: DecideContext): RealmChange[] {
  switch (command.type) {
    case 'bot.create':
      return decideCreate(state, command, context);
    case 'bot.update':
      return decideUpdate(state, command);
    case 'bot.deactivate': {
      const bot = accessBot(state, command);
      if (!bot.isActive) throw badRequest('Bot is already deactivated');
      return [{ type: 'user.deactivated', userId: bot.userId }];
    }
    case 'bot.regenerate_api_key': {
      const bot = accessBot(state, command);
      return [{ type: 'user.api_key_changed', userId: bot.userId, apiKey: newApiKey() }];
    }
  }
}

function decideCreate(state: RealmState, command: Command<'bot.create'>, context: DecideContext): RealmChange[] {
  const owner = activeHuman(state, command.caller);
  const type = command.botType as BotType;
  // Anyone in can_create_bots_group makes any bot; can_create_write_only_bots_group adds incoming webhooks.
  const mayCreate = allowed(state, 'can_create_bots_group', owner.userId) ||
    (type === BotType.incomingWebhook && allowed(state, 'can_create_write_only_bots_group', owner.userId));
  if (!mayCreate) throw insufficient();
  // Each bot can hold event queues as a person can; a person with ever more of them could hold ever more.
  if (ownedBots(state, owner.userId) >= command.maxBotsPerOwner) {
    throw badRequest(`You already own ${command.maxBotsPerOwner} active bots, the most one person may own`);
  }
  if (!CREATABLE_BOT_TYPES.includes(type)) throw badRequest('Invalid bot type');
  const interfaceType = command.interfaceType ?? 1;
  if (!SERVICE_INTERFACES.includes(interfaceType as never)) throw badRequest('Invalid interface type');
  const fullName = checkFullName(command.fullName);
  const shortName = command.shortName.trim();
  if (!shortName || !EMAIL_LOCAL_PART.test(`${shortName}-bot`)) throw badRequest('Bad name or username');
  const email = `${shortName}-bot@${command.domain}`;
  if (findUserByEmail(state, email)) throw badRequest('Username already in use');
  checkNameAvailable(state, fullName, null);
  const services: BotService[] = type === BotType.outgoingWebhook
    ? [{ name: command.serviceName?.trim() || shortName, baseUrl: command.payloadUrl ?? '', interface: interfaceType, token: newApiKey() }]
    : [];
  const bot: BotProfile = {
    type,
    ownerId: owner.userId,
    defaultSendingChannelId: channelByName(state, owner, command.defaultSendingStream),
    defaultEventsRegisterChannelId: channelByName(state, owner, command.defaultEventsRegisterStream),
    defaultAllPublicStreams: command.defaultAllPublicStreams ?? false,
    services,
  };
  const user: UserProfile = {
    ...newAccountBasics(state, context),
    email,
    fullName,
    role: Role.member,
    isBot: true,
    // Bots have no password: they authenticate with their API key only.
    passwordHash: null,
    canCreateUsers: false,
    bot,
  };
  return [{ type: 'user.created', user }];
}

function decideUpdate(state: RealmState, command: Command<'bot.update'>): RealmChange[] {
  const bot = accessBot(state, command);
  const caller = activeHuman(state, command.caller);
  const change: BotChange = { type: 'bot.updated', userId: bot.userId };
  if (command.fullName !== undefined) {
    const fullName = checkFullName(command.fullName);
    if (fullName !== bot.fullName) {
      checkNameAvailable(state, fullName, bot.userId);
      change.fullName = fullName;
    }
  }
  if (command.ownerId !== undefined && command.ownerId !== bot.bot.ownerId) {
    const owner = state.users.get(command.ownerId);
    if (!owner) throw badRequest('Failed to change owner, no such user');
    if (!owner.isActive) throw badRequest('Failed to change owner, user is deactivated');
    if (owner.isBot) throw badRequest("Failed to change owner, bots can't own other bots");
    // The cap of creation holds for a bot handed over too, or bots passed between owners would pile up on one.
    if (bot.isActive && ownedBots(state, owner.userId) >= command.maxBotsPerOwner) {
      throw badRequest(`Failed to change owner, the new owner already owns ${command.maxBotsPerOwner} active bots`);
    }
    change.ownerId = owner.userId;
    change.previousOwnerId = bot.bot.ownerId;
  }
  const channel = (name: string | null | undefined, current: number | null, set: (id: number | null) => void) => {
    if (name === undefined) return;
    const id = channelByName(state, caller, name);
    if (id !== current) set(id);
  };
  channel(command.defaultSendingStream, bot.bot.defaultSendingChannelId, (id) => (change.defaultSendingChannelId = id));
  channel(command.defaultEventsRegisterStream, bot.bot.defaultEventsRegisterChannelId, (id) => (change.defaultEventsRegisterChannelId = id));
  if (command.defaultAllPublicStreams !== undefined && command.defaultAllPublicStreams !== bot.bot.defaultAllPublicStreams) {
    change.defaultAllPublicStreams = command.defaultAllPublicStreams;
  }
  if ((command.servicePayloadUrl !== undefined || command.serviceInterface !== undefined) && bot.bot.type === BotType.outgoingWebhook) {
    if (command.serviceInterface !== undefined && !SERVICE_INTERFACES.includes(command.serviceInterface as never)) throw badRequest('Invalid interface type');
    change.services = bot.bot.services.map((service) => ({
      ...service,
      baseUrl: command.servicePayloadUrl ?? service.baseUrl,
      interface: command.serviceInterface ?? service.interface,
    }));
  }
  return Object.keys(change).length > 2 ? [change] : [];
}

/** The bot a command names, if the caller may administer it (its owner or an administrator). */
function accessBot(state: RealmState, command: { caller: BotCommand['caller']; botId: number }) {
  const bot = asBot(state.users.get(command.botId));
  if (!bot) throw badRequest('No such bot');
  if (command.caller.kind === 'user') {
    const caller = state.users.get(command.caller.userId);
    if (!caller || !administers(caller, bot.bot)) throw badRequest('Insufficient permission');
  }
  return bot;
}

function ownedBots(state: RealmState, ownerId: number): number {
  return activeBotsByOwner(state.users.values()).get(ownerId) ?? 0;
}

/** Bots are made, owned and configured by people. */
function activeHuman(state: RealmState, caller: BotCommand['caller']): UserProfile {
  const user = caller.kind === 'user' ? state.users.get(caller.userId) : undefined;
  if (!user || !user.isActive || user.isBot) throw insufficient();
  return user;
}

/** No two active accounts may have a bot's name (so that people can tell them apart). */
function checkNameAvailable(state: RealmState, fullName: string, self: number | null): void {
  for (const user of state.users.values()) {
    if (user.isActive && user.userId !== self && user.fullName === fullName) throw badRequest('Name is already in use!');
  }
}

/** A default channel by name, which the acting user must be able to see; '' or null is none. */
function channelByName(state: RealmState, actor: UserProfile, name: string | null | undefined): number | null {
  if (!name) return null;
  const id = state.channelIdByName.get(channelKey(name));
  const channel = id === undefined ? undefined : state.channels.get(id);
  if (!channel || !canSeeChannel(state, channel, actor.userId)) throw badRequest(`Invalid channel name '${name}'`);
  return channel.id;
}
