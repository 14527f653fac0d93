import { z } from 'zod';
import { badRequest } from '../../actors/errors.ts';
import { botDomainOf } from '../../actors/realm/bots/state.ts';
import { asBot, botListEntry } from '../../actors/realm/bots/views.ts';
import type { RealmState, UserProfile } from '../../actors/realm/state.ts';
import { p, Param } from '../http/params.ts';
import type { AppServices } from '../services.ts';
import { route } from './route.ts';
import { displayEmail } from '../../actors/realm/email-visibility.ts';

const botId = p.int(z.number().int());
const caller = (user: UserProfile) => ({ kind: 'user' as const, userId: user.userId });

/** Text that clients send plainly or as a JSON string (`payload_url`, `service_payload_url`). */
const text = Param.of((raw) => {
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === 'string' ? value : raw;
  } catch {
    return raw;
  }
}, z.string());

/** A channel name; the original takes '' (and this server JSON null too) as "none". */
const channelName = Param.of((raw) => (raw === 'null' ? null : raw), z.string().nullable());

/** The domain of the realm's bot emails (bots/state.ts). */
export function botDomain(services: AppServices, realm: RealmState): string {
  return botDomainOf(services.realmUrl(realm));
}

function botResponse(realm: RealmState, id: number) {
  const bot = asBot(realm.users.get(id));
  if (!bot) return {};
  const entry = botListEntry(realm, bot);
  const service = bot.bot.services[0];
  const owner = bot.bot.ownerId === null ? undefined : realm.users.get(bot.bot.ownerId);
  return {
    full_name: entry.full_name,
    avatar_url: entry.avatar_url,
    service_interface: service?.interface ?? null,
    service_payload_url: service?.baseUrl ?? null,
    default_sending_stream: entry.default_sending_stream,
    default_events_register_stream: entry.default_events_register_stream,
    default_all_public_streams: entry.default_all_public_streams,
    ...(owner && { bot_owner: displayEmail(realm, owner) }),
  };
}

export const botRoutes = [
  route({
    method: 'POST',
    path: '/bots',
    auth: 'user',
    params: {
      full_name: p.string(),
      short_name: p.string(),
      bot_type: p.int(z.number().int()).default(1),
      service_name: p.string().optional(),
      payload_url: text.optional(),
      interface_type: p.int(z.number().int()).default(1),
      default_sending_stream: p.string().optional(),
      default_events_register_stream: p.string().optional(),
      default_all_public_streams: p.bool().optional(),
    },
    async handle({ services, realm, user }, params) {
      const [change] = await services.runtime.execute(realm.realmId, {
        type: 'bot.create', caller: caller(user), fullName: params.full_name, shortName: params.short_name, botType: params.bot_type,
        domain: botDomain(services, realm), serviceName: params.service_name, payloadUrl: params.payload_url, interfaceType: params.interface_type,
        defaultSendingStream: params.default_sending_stream, defaultEventsRegisterStream: params.default_events_register_stream,
        defaultAllPublicStreams: params.default_all_public_streams, maxBotsPerOwner: services.config.maxBotsPerUser,
      });
      if (change?.type !== 'user.created') throw badRequest('Bot not created');
      const entry = botListEntry(realm, asBot(realm.users.get(change.user.userId))!);
      return {
        user_id: change.user.userId,
        api_key: entry.api_key,
        avatar_url: entry.avatar_url,
        default_sending_stream: entry.default_sending_stream,
        default_events_register_stream: entry.default_events_register_stream,
        default_all_public_streams: entry.default_all_public_streams,
      };
    },
  }),

  // The caller's own active bots, administrators included (they see every bot through `realm_bots`).
  route({
    method: 'GET',
    path: '/bots',
    auth: 'user',
    params: {},
    handle({ realm, user }) {
      const bots = [];
      for (const other of realm.users.values()) {
        const bot = asBot(other);
        if (bot && bot.isActive && bot.bot.ownerId === user.userId) bots.push(botListEntry(realm, bot));
      }
      return { bots };
    },
  }),

  route({
    method: 'PATCH',
    path: '/bots/{bot_id}',
    auth: 'user',
    params: {
      bot_id: botId,
      full_name: p.string().optional(),
      bot_owner_id: p.int(z.number().int()).optional(),
      default_sending_stream: channelName.optional(),
      default_events_register_stream: channelName.optional(),
      default_all_public_streams: p.bool().optional(),
      service_payload_url: text.optional(),
      service_interface: p.int(z.number().int()).optional(),
    },
    async handle({ services, realm, user }, params) {
      await services.runtime.execute(realm.realmId, {
        type: 'bot.update', caller: caller(user), botId: params.bot_id, fullName: params.full_name, ownerId: params.bot_owner_id,
        defaultSendingStream: params.default_sending_stream, defaultEventsRegisterStream: params.default_events_register_stream,
        defaultAllPublicStreams: params.default_all_public_streams, servicePayloadUrl: params.service_payload_url,
        serviceInterface: params.service_interface, maxBotsPerOwner: services.config.maxBotsPerUser,
      });
      return botResponse(realm, params.bot_id);
    },
  }),

  route({
    method: 'DELETE',
    path: '/bots/{bot_id}',
    auth: 'user',
    params: { bot_id: botId },
    async handle({ services, realm, user }, params) {
      await services.runtime.execute(realm.realmId, { type: 'bot.deactivate', caller: caller(user), botId: params.bot_id });
      return {};
    },
  }),

  route({
    method: 'POST',
    path: '/bots/{bot_id}/api_key/regenerate',
    auth: 'user',
    params: { bot_id: botId },
    async handle({ services, realm, user }, params) {
      const [change] = await services.runtime.execute(realm.realmId, { type: 'bot.regenerate_api_key', caller: caller(user), botId: params.bot_id });
      return { api_key: change?.type === 'user.api_key_changed' ? change.apiKey : null };
    },
  }),
];
