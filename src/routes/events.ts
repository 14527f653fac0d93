import { z } from 'zod';
import { badRequest, ChatError, ErrorCode } from '../../actors/errors.ts';
import { prepareRecentConversations } from '../../actors/register/builders/messages.ts';
import { prepareNewestReadable } from '../../actors/realm/messages/access.ts';
import { allPending } from '../../actors/realm/messages/newest-ids.ts';
import { initialStateFields, type InitialStateOptions } from '../../actors/register/initial-state.ts';
import { hasPublicAccess, spectatorView } from '../../actors/register/spectator.ts';
import { SPEC_LIMITS } from '../../actors/queue/limits.ts';
import { checkEventNarrow } from '../../actors/queue/narrow.ts';
import type { QueueSpec } from '../../actors/queue/spec.ts';
import { Role, type RealmState, type UserProfile } from '../../actors/realm/state.ts';
import { authenticate } from '../http/auth.ts';
import { checkRateLimit, rateLimitKey } from '../http/dispatch.ts';
import { PartsFields, WrittenFields, type HandlerResult } from '../http/envelope.ts';
import { JsonBytes } from '../../actors/wire/json-bytes.ts';
import { includeSubscribers, p, type ParamsOf } from '../http/params.ts';
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_GUESSES, PASSWORD_MIN_LENGTH } from '../passwords.ts';
import { SOCKET_TICKET_SECONDS } from '../http/socket-tickets.ts';
import type { AppServices } from '../services.ts';
import { FEATURE_LEVEL, MERGE_BASE, VERSION } from '../version.ts';
import { route, type RouteContext } from './route.ts';
import { Later } from '../../actors/later.ts';
import { eventsJson, type BufferedEvent } from '../../actors/queue/buffer.ts';
import { EventsWriter, eventsSize } from '../../actors/queue/frame-bytes.ts';
import type { Queue } from '../../actors/queue/registry.ts';
import type { WireResponse } from '../../actors/wire/responses.ts';

// zulip-js sends the string "null" for "every type".
const typeList = z
  .array(z.string().max(SPEC_LIMITS.eventTypeLength, `an event type is at most ${SPEC_LIMITS.eventTypeLength} characters`))
  .max(SPEC_LIMITS.eventTypes, `at most ${SPEC_LIMITS.eventTypes} event types`)
  .nullable();

const narrowText = z.string().max(SPEC_LIMITS.narrowTermLength, `at most ${SPEC_LIMITS.narrowTermLength} characters`);

const registerParams = {
  apply_markdown: p.bool().default(false),
  client_extavatar: p.bool().optional(),
  include_subscribers: includeSubscribers().default(false),
  slim_presence: p.bool().default(false),
  presence_history_limit_days: p.int(z.number().int().min(0)).optional(),
  event_types: p.json(typeList).default(null),
  all_public_streams: p.bool().default(false),
  client_capabilities: p.json(
    z
      .record(z.string().max(SPEC_LIMITS.capabilityLength, `a capability's name is at most ${SPEC_LIMITS.capabilityLength} characters`), z.boolean())
      .refine((capabilities) => Object.keys(capabilities).length <= SPEC_LIMITS.capabilities, `at most ${SPEC_LIMITS.capabilities} capabilities`),
  ).default({}),
  fetch_event_types: p.json(typeList).optional(),
  narrow: p.json(z.array(z.tuple([narrowText, narrowText])).max(SPEC_LIMITS.narrowTerms, `at most ${SPEC_LIMITS.narrowTerms} terms`)).default([]),
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

async function register(context: RouteContext<'optional'>, params: RegisterParams) {
  const { services, realm, user } = context;
  if (user === null) return registerSpectator(context, params);
  const spec = queueSpec(params, services, user);
  const fetchTypes = fetchTypesOf(params);
  // A user in many direct conversations or channels: their newest ids read a slice a turn, not all while the state is made.
  const asked = (type: string) => fetchTypes === null || fetchTypes.includes(type);
  const ready = allPending(asked('recent_private_conversations') ? prepareRecentConversations(realm, user.userId) : null, asked('message') ? prepareNewestReadable(realm, user.userId) : null);
  if (ready) await ready;
  const { queue, initial } = await services.runtime.registerQueue(realm.realmId, user.userId, spec, (view) =>
    initialStateFields(view, stateOptions(services, view.realm, params, spec.clientExtavatar)),
  );
  // The queue and the state are made in one synchronous step, so no event can fall between them.
  return registration(queue.id, initial);
}

const VERSION_FIELDS = JSON.stringify({ svc_feature_level: FEATURE_LEVEL, svc_version: VERSION, svc_merge_base: MERGE_BASE }).slice(1, -1);

/**
 * A registration's answer: the queue, the server's version and the state's JSON fields in parts
 * (initialStateFields), written as bytes when it is sent (PartsFields). At 10,000 users it is 3.5 MB, mostly
 * the shared user lists: joined as text it was flattened and encoded again per registration, and a writer
 * per waiting answer wrote it into fresh memory (2026-11-29).
 */
const registration = (queueId: string | null, initial: readonly string[]) =>
  new PartsFields([`"queue_id":${JSON.stringify(queueId)},"last_event_id":-1,${VERSION_FIELDS},`, ...initial]);

/**
 * Registration without credentials, in a realm with public access (feature level 149): the web-public
 * state, and no queue (`queue_id` null); a spectator reads new messages by fetching them. Elsewhere the
 * answer is the one for missing credentials.
 */
async function registerSpectator({ services, realm, request }: RouteContext<'optional'>, params: RegisterParams) {
  if (!hasPublicAccess(realm, services.config.webPublicStreamsEnabled)) authenticate(realm, request.authorization);
  // The whole web-public state, built for each anonymous caller: also within the server-wide budget.
  services.clientBudgets.costlyRequest();
  for (const name of ['client_extavatar', 'include_subscribers'] as const) {
    if (params[name] === true) throw badRequest(`Invalid '${name}' parameter for anonymous request`);
  }
  const initial = initialStateFields(spectatorView(realm), stateOptions(services, realm, { ...params, include_subscribers: false }, false));
  // What the state shows must be durable before anyone is shown it, as for any read.
  await services.runtime.settled();
  return registration(null, initial);
}

/** The state a registration asks for: its fetch types, else its event types (null: all). */
const fetchTypesOf = (params: RegisterParams) => (params.fetch_event_types !== undefined ? params.fetch_event_types : params.event_types);

function stateOptions(services: AppServices, realm: RealmState, params: RegisterParams, clientExtavatar: boolean): InitialStateOptions {
  return {
    fetchTypes: fetchTypesOf(params),
    clientExtavatar,
    includeSubscribers: params.include_subscribers,
    capabilities: params.client_capabilities,
    slimPresence: params.slim_presence,
    presenceHistoryLimitDays: params.presence_history_limit_days,
    now: services.runtime.clock.now(),
    realmUrl: services.realmUrl(realm),
    webPublicStreamsEnabled: services.config.webPublicStreamsEnabled,
    gifApiKey: services.config.gifApiKey,
    jitsiServerUrl: services.config.jitsiServerUrl,
    generation: services.generation,
    passwordLimits: { minLength: PASSWORD_MIN_LENGTH, maxLength: PASSWORD_MAX_LENGTH, minGuesses: PASSWORD_MIN_GUESSES },
    realmUploadQuotaBytes: services.config.realmUploadQuotaBytes,
  };
}

/** Every poll's answer is written here as it is sent (see WrittenFields). */
const answers = new EventsWriter();
const [EVENTS_FIELD, QUEUE_ID_FIELD] = ['"events":', ',"queue_id":'];

/** A poll's answer: its events and its queue's id. */
class PollAnswer extends WrittenFields {
  constructor(
    private readonly events: readonly BufferedEvent[],
    private readonly queue: Queue,
  ) {
    super();
  }

  protected writeBody(head: string, tail: string): Uint8Array {
    const { events } = this;
    const id = this.queue.idJson;
    const size = head.length + EVENTS_FIELD.length + eventsSize(events, 0) + QUEUE_ID_FIELD.length + id.length + tail.length;
    return answers.start(size).ascii(head).ascii(EVENTS_FIELD).events(events, 0).ascii(QUEUE_ID_FIELD).ascii(id).ascii(tail).done();
  }

  json(): string {
    return `${EVENTS_FIELD}${eventsJson(this.events)}${QUEUE_ID_FIELD}${JSON.stringify(this.queue.id)}`;
  }
}

const pollAnswer = (events: readonly BufferedEvent[], queue: Queue) => new PollAnswer(events, queue);

/** A poll on a queue: its events at once, or held (a Later: see later.ts). */
function pollQueue({ services, realm, user, request }: RouteContext<'user'>, queueId: string, lastEventId: number | undefined, dontBlock: boolean): HandlerResult | Later<HandlerResult> {
  const { queues } = services.runtime;
  const queue = queues.get(queueId, realm.realmId, user.userId);
  if (lastEventId === undefined) {
    throw new ChatError(ErrorCode.REQUEST_VARIABLE_MISSING, "Missing 'last_event_id' argument", 400, { var_name: 'last_event_id' });
  }
  const events = queues.poll(queue, lastEventId, dontBlock, request.signal);
  return events instanceof Later ? events.map<HandlerResult, Queue>(pollAnswer, queue) : pollAnswer(events, queue);
}

/** What a poll on a queue sends, declared once for the route and its quick form. */
const pollParams = {
  queue_id: p.string().optional(),
  last_event_id: p.int().optional(),
  dont_block: p.bool().default(false),
};

export const eventRoutes = [
  route({ method: 'POST', path: '/register', auth: 'optional', params: registerParams, handle: register }),

  route({
    method: 'GET',
    path: '/events',
    auth: 'user',
    rateLimited: false,
    params: { ...registerParams, ...pollParams },
    // Not an async function: a held poll keeps only what its answer needs (see dispatch's handleApi).
    handle(context, params) {
      const { services, realm, user } = context;
      if (params.queue_id === undefined) {
        // Without a queue id a non-blocking call registers a queue on the spot (the original's shortcut).
        if (!params.dont_block) {
          throw new ChatError(ErrorCode.REQUEST_VARIABLE_MISSING, "Missing 'queue_id' argument", 400, { var_name: 'queue_id' });
        }
        // A registration, rate limited as POST /register is (polls are not).
        checkRateLimit(services, rateLimitKey(realm.realmId, user));
        return services.runtime.createQueue(realm.realmId, user.userId, queueSpec(params, services, user)).then((queue) => ({ events: [], queue_id: queue.id }) satisfies WireResponse<'/events', 'get'>);
      }
      return pollQueue(context, params.queue_id, params.last_event_id, params.dont_block);
    },
    // A client's poll (queue_id, last_event_id, maybe dont_block): once per event it is sent, thousands at
    // a time in a fan-out. Without a queue id the general path answers (an error, or a registration).
    quick: {
      params: pollParams,
      handle: (context, params) => (params.queue_id === undefined ? null : pollQueue(context, params.queue_id, params.last_event_id, params.dont_block)),
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
      return {} satisfies WireResponse<'/events', 'delete'>;
    },
  }),
];
