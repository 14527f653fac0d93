import { z } from 'zod';
import { ChatError, ErrorCode } from '../../actors/errors.ts';
import { initialState } from '../../actors/register/initial-state.ts';
import { checkEventNarrow } from '../../actors/queue/narrow.ts';
import type { QueueSpec } from '../../actors/queue/spec.ts';
import { Role, type UserProfile } from '../../actors/realm/state.ts';
import { RawFields } from '../http/envelope.ts';
import { p, type ParamsOf } from '../http/params.ts';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_GUESSES, PASSWORD_MIN_LENGTH } from '../passwords.ts';
import { SOCKET_TICKET_SECONDS } from '../http/socket-tickets.ts';
import type { AppServices } from '../services.ts';
import { FEATURE_LEVEL, MERGE_BASE, VERSION } from '../version.ts';
import { route, type RouteContext } from './route.ts';

// zulip-js sends the string "null" for "every type".
const typeList = z.array(z.string()).nullable();

const registerParams = {
  apply_markdown: p.bool().default(false),
  client_extavatar: p.bool().optional(),
  include_subscribers: p.bool().default(false),
  slim_presence: p.bool().default(false),
  presence_history_limit_days: p.int(z.number().int().min(0)).optional(),
  event_types: p.json(typeList).default(null),
  all_public_streams: p.bool().default(false),
  client_capabilities: p.json(z.record(z.string(), z.boolean())).default({}),
  fetch_event_types: p.json(typeList).optional(),
  narrow: p.json(z.array(z.tuple([z.string(), z.string()]))).default([]),
  idle_queue_timeout: p.int(z.number().int().min(1)).optional(),
};

type RegisterParams = ParamsOf<typeof registerParams>;

function queueSpec(params: RegisterParams, services: AppServices, user: UserProfile): QueueSpec {
  checkEventNarrow(params.narrow);
  // Guests may not read public channels they are not in, so they may not ask for all of them.
  if (params.all_public_streams && user.role === Role.guest) throw new ChatError(ErrorCode.BAD_REQUEST, 'User not authorized for this query');
  const { queueIdleMs, queueMaxIdleMs } = services.config;
  const requested = params.idle_queue_timeout === undefined ? queueIdleMs : params.idle_queue_timeout * 1000;
  return {
    eventTypes: params.event_types,
    allPublicStreams: params.all_public_streams,
    narrow: params.narrow,
    capabilities: params.client_capabilities,
    slimPresence: params.slim_presence,
    applyMarkdown: params.apply_markdown,
    clientExtavatar: params.client_extavatar ?? true,
    idleTimeoutMs: Math.min(requested, queueMaxIdleMs),
  };
}

async function register(context: RouteContext<'user'>, params: RegisterParams) {
  const { services, realm, user } = context;
  const spec = queueSpec(params, services, user);
  const fetchTypes = params.fetch_event_types !== undefined ? params.fetch_event_types : params.event_types;
  const { queue, initial } = await services.runtime.registerQueue(realm.realmId, user.userId, spec, (view) =>
    initialState(view, {
      fetchTypes,
      clientExtavatar: spec.clientExtavatar,
      includeSubscribers: params.include_subscribers,
      capabilities: spec.capabilities,
      slimPresence: params.slim_presence,
      presenceHistoryLimitDays: params.presence_history_limit_days,
      now: services.runtime.clock.now(),
      realmUrl: services.realmUrl(view.realm),
      generation: services.generation,
      passwordLimits: { minLength: PASSWORD_MIN_LENGTH, maxLength: PASSWORD_MAX_LENGTH, minGuesses: PASSWORD_MIN_GUESSES },
    }),
  );
  return {
    queue_id: queue.id,
    // The queue and the state are made in one synchronous step, so no event can fall between them.
    last_event_id: -1,
    svc_feature_level: FEATURE_LEVEL,
    svc_version: VERSION,
    svc_merge_base: MERGE_BASE,
    ...initial,
  };
}

export const eventRoutes = [
  route({ method: 'POST', path: '/register', auth: 'user', params: registerParams, handle: register }),

  route({
    method: 'GET',
    path: '/events',
    auth: 'user',
    rateLimited: false,
    params: {
      ...registerParams,
      queue_id: p.string().optional(),
      last_event_id: p.int().optional(),
      dont_block: p.bool().default(false),
    },
    async handle(context, params) {
      const { services, realm, user, request } = context;
      const { runtime } = services;
      if (params.queue_id === undefined) {
        // Without a queue id a non-blocking call registers a queue on the spot (the original's shortcut).
        if (!params.dont_block) {
          throw new ChatError(ErrorCode.REQUEST_VARIABLE_MISSING, "Missing 'queue_id' argument", 400, { var_name: 'queue_id' });
        }
        const queue = await runtime.createQueue(realm.realmId, user.userId, queueSpec(params, services, user));
        return { events: [], queue_id: queue.id };
      }
      const queue = runtime.queues.get(params.queue_id, realm.realmId, user.userId);
      if (params.last_event_id === undefined) {
        throw new ChatError(ErrorCode.REQUEST_VARIABLE_MISSING, "Missing 'last_event_id' argument", 400, { var_name: 'last_event_id' });
      }
      const events = await runtime.queues.poll(queue, params.last_event_id, params.dont_block, request.signal);
      return new RawFields(`"events":${events},"queue_id":${JSON.stringify(queue.id)}`);
    },
  }),

  // A one-time credential for opening GET /events/socket from a browser, which cannot send Basic auth there.
  route({
    method: 'POST',
    path: '/events/socket/ticket',
    auth: 'user',
    params: {},
    handle: ({ services, realm, user }) => ({
      ticket: services.socketTickets.issue(realm.realmId, user.userId),
      expires_in_seconds: SOCKET_TICKET_SECONDS,
    }),
  }),

  route({
    method: 'DELETE',
    path: '/events',
    auth: 'user',
    params: { queue_id: p.string() },
    async handle({ services, realm, user }, { queue_id }) {
      const { runtime } = services;
      await runtime.deleteQueue(runtime.queues.get(queue_id, realm.realmId, user.userId));
      return {};
    },
  }),
];
