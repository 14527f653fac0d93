import { ChatError, ErrorCode } from '../../actors/errors.ts';
import { Later } from '../../actors/later.ts';
import { NotPrimary, queueNode } from '../../actors/replication.ts';
import type { UserProfile } from '../../actors/realm/state.ts';
import type { Route, RouteContext } from '../routes/route.ts';
import type { HandlerResult } from './envelope.ts';
import type { AppServices } from '../services.ts';
import { authenticate, realmForHost, sameKey } from './auth.ts';
import { isLoopback } from './client-address.ts';
import { errorResponse, successResponse } from './envelope.ts';
import { readForm, type UploadedFile } from './form.ts';
import { NONE_IGNORED, readParams, readQuickParams } from './params.ts';
import { refuseOver } from './rate-limit.ts';
import type { ApiRequest, ApiResponse } from './request.ts';
import { Router } from './router.ts';

export const API_PREFIX = '/api/v1';

/** A request's answer: at once, in a promise, or for a held long-poll in a Later (see actors/later.ts). */
export type Answer = ApiResponse | Promise<ApiResponse> | Later<ApiResponse>;

export interface Dispatch {
  /** synchronous where every step of the request is (see handleApi) */
  (request: ApiRequest): Answer;
  /**
   * Called by the front end before it reads a request's body, with the length the request declares (null:
   * undeclared, chunked): an answer refuses the request unread (see Route.admit); null reads the body.
   */
  admit(request: ApiRequest, declaredBytes: number | null): ApiResponse | null;
}

/**
 * The whole request pipeline without the socket: route, realm, credentials, rate limit, parameters,
 * handler, envelope. The uWS front end calls it, and so can a test.
 */
export function createDispatch(services: AppServices, routes: readonly Route[]): Dispatch {
  for (const route of routes) checkQuickForm(route);
  const router = new Router(routes.filter((route) => !route.root));
  // Pages outside the API (routes with `root`, links in mails) are matched against the whole path.
  const rootRouter = new Router(routes.filter((route) => route.root));

  const matchRoute = (request: ApiRequest) => request.path.startsWith(`${API_PREFIX}/`)
    ? router.match(request.method, request.path.slice(API_PREFIX.length))
    : rootRouter.match(request.method, request.path);

  /**
   * The request's answer: synchronously where every step is (a long-poll with events waiting, most reads),
   * else a promise. No step is an async function: one suspended while a poll is held keeps every local of
   * its frame alive (route, realm, form, parameters, context) for as long as the poll is held, thousands of
   * them in a fan-out, and a poll answered at once would still pay a promise step per frame.
   */
  const handleApi = (request: ApiRequest, label: Label): Answer => {
    // A request another node forwarded here is answered here, whatever this node's role.
    const attempt: Attempt = { request, label, forwarded: services.cluster?.takeForwardMark(request) ?? false, spent: null };
    try {
      const match = matchRoute(request);
      if (match.kind === 'not-found') throw notFound();
      if (match.kind === 'method-not-allowed') {
        throw new ChatError(ErrorCode.BAD_REQUEST, 'Method Not Allowed', 405, {}, { Allow: match.allowed.join(', ') });
      }
      const route = match.route;
      label.route = route.path;
      // A replica answers with the state the primary had when the request came, credentials included
      // (long-polls answer with events).
      const cluster = services.cluster;
      const answer = cluster && route.rateLimited !== false
        ? cluster.caughtUp().then(() => settledAnswer(answerRoute(attempt, route, match.pathParams)))
        : answerRoute(attempt, route, match.pathParams);
      return answer instanceof Promise ? answer.catch((error: unknown) => failed(attempt, error)) : answer;
    } catch (error) {
      return failed(attempt, error);
    }
  };

  const answerRoute = (attempt: Attempt, route: Route, pathParams: ReadonlyMap<string, string>): Answer => {
    const { request } = attempt;
    const realm = realmForHost(services.runtime, request.host, services.externalUrl.hostname);
    let user: UserProfile | null = null;
    if (route.auth === 'user' || (route.auth === 'optional' && request.authorization !== '')) {
      user = authenticate(realm, request.authorization);
      if (route.rateLimited !== false) {
        attempt.spent = rateLimitKey(realm.realmId, user);
        checkRateLimit(services, attempt.spent);
      }
      route.authorize?.(user, realm);
    } else if (route.anonymousBudget !== false) {
      request.clientAddress ??= request.connection?.clientAddress();
      services.clientBudgets.anonymousRequest(request);
    }
    const quick = route.quick;
    if (quick && request.body.length === 0 && pathParams.size === 0 && !services.cluster) {
      // In a cluster the general path reads the queue id first, to forward a poll to the queue's node.
      const params = readQuickParams(quick.params, request.query);
      if (params !== null) {
        const context: RouteContext<'public'> = { services, realm, user, request, files: NO_FILES };
        const result = quick.handle(context as RouteContext<never>, params as never);
        if (result !== null) return answerResult(attempt, route, result, NONE_IGNORED);
      }
    }
    const files: UploadedFile[] = [];
    const values = readForm(request.query, request.contentType, request.body, route.files ? files : undefined);
    const context: RouteContext<'public'> = { services, realm, user, request, files };
    return values instanceof Promise
      ? values.then((read) => settledAnswer(answerWith(attempt, route, pathParams, context, read)))
      : answerWith(attempt, route, pathParams, context, values);
  };

  const answerWith = (
    attempt: Attempt, route: Route, pathParams: ReadonlyMap<string, string>, context: RouteContext<'public'>, values: Map<string, string>,
  ): Answer => {
    const cluster = services.cluster;
    const queueId = cluster && values.get('queue_id');
    if (queueId) {
      const node = queueNode(queueId);
      if (node !== null && node !== cluster.nodeId && !attempt.forwarded) return cluster.forwardToNode(node, queueId, attempt.request);
    }
    for (const [name, value] of pathParams) values.set(name, value);
    const { params, ignored } = readParams(route.params, values);
    return answerResult(attempt, route, route.handle(context as RouteContext<never>, params as never), ignored);
  };

  /** The handler's result in the success envelope, once what it shows is durable. */
  const answerResult = (attempt: Attempt, route: Route, result: ReturnType<Route['handle']>, ignored: readonly string[]): Answer => {
    const { request, label } = attempt;
    // A read sees changes applied in memory whose group commit may still be in flight: it answers once they
    // are durable, so that no client is shown what a crash could still lose (test/crash-load.test.ts caught
    // a reader shown messages that a SIGKILL then took). Writes have already waited for their own commit;
    // long-polls (not rate limited) answer with delivered events, durable already, and must not wait for
    // later commits: that would add a commit to every delivery.
    const settles = request.method === 'GET' && route.rateLimited !== false;
    if (result instanceof Later) {
      // A held long-poll: not rate limited, so it never waits for a commit (settles is false). Its one step
      // keeps what it needs, not the request (see later.ts): the request's label, with the ignored parameters.
      if (settles) throw new Error(`${route.path}: a Later from a route whose reads settle`);
      label.ignored = ignored;
      return result.map(heldAnswer, label);
    }
    if (result instanceof Promise) {
      return result.then((value: HandlerResult) => (settles ? services.runtime.settled().then(() => successResponse(value, ignored)) : successResponse(value, ignored)));
    }
    return settles ? services.runtime.settled().then(() => successResponse(result, ignored)) : successResponse(result, ignored);
  };

  /**
   * A held answer's step: the envelope, and the request's metrics (observed here, not again by the caller).
   * Whatever goes wrong is answered as a synchronous failure would be (a Later cannot reject).
   */
  const heldAnswer = (value: HandlerResult, label: Label): ApiResponse => {
    let response: ApiResponse;
    try {
      response = successResponse(value, label.ignored);
    } catch (error) {
      response = error instanceof ChatError ? errorResponse(error) : internalError({ method: label.method, path: label.route }, error);
    }
    return observe(response, label);
  };

  const failed = (attempt: Attempt, error: unknown): ApiResponse | Promise<ApiResponse> => {
    const cluster = services.cluster;
    if (error instanceof NotPrimary && cluster && !attempt.forwarded) {
      // The primary counts the write against the caller's budget: in the cluster it is counted once.
      if (attempt.spent !== null) services.apiLimiter?.refund(attempt.spent);
      return cluster.forwardToPrimary(attempt.request).catch((failure: unknown) => {
        if (failure instanceof ChatError) return errorResponse(failure);
        return internalError(attempt.request, failure);
      });
    }
    if (error instanceof ChatError) return errorResponse(error);
    return internalError(attempt.request, error);
  };

  const internalError = (request: Pick<ApiRequest, 'method' | 'path'>, error: unknown): ApiResponse => {
    services.log.error({ err: error, method: request.method, path: request.path }, 'request failed');
    return errorResponse(new ChatError(ErrorCode.INTERNAL_SERVER_ERROR, 'Internal server error', 500));
  };

  const admit = (request: ApiRequest, declaredBytes: number | null): ApiResponse | null => {
    const match = matchRoute(request);
    if (match.kind !== 'found' || !match.route.admit) return null;
    const route = match.route;
    try {
      const realm = realmForHost(services.runtime, request.host, services.externalUrl.hostname);
      const user = route.auth === 'public' || (route.auth === 'optional' && request.authorization === '') ? null : authenticate(realm, request.authorization);
      try {
        route.admit?.({ services, realm, user }, declaredBytes);
      } catch (error) {
        // A refusal costs the caller a request of the rate limit, as if the body had been read.
        if (user) services.apiLimiter?.hit(rateLimitKey(realm.realmId, user));
        throw error;
      }
      return null;
    } catch (error) {
      // A fault of the check itself is left to the handling of the whole request.
      if (!(error instanceof ChatError)) return null;
      services.metrics.requests.record(request.method, route.path, error.status, null);
      const response = errorResponse(error);
      // The body is left unread: the connection cannot carry another request.
      return { ...response, headers: { ...response.headers, Connection: 'close' } };
    }
  };

  const observe = (response: ApiResponse, label: Label): ApiResponse => {
    services.metrics.requests.record(label.method, label.route, response.status, (performance.now() - label.started) / 1000);
    return response;
  };

  return Object.assign((request: ApiRequest): Answer => {
    if (request.method === 'GET' && request.path === '/health') return health(services);
    if (request.method === 'GET' && request.path === '/metrics') {
      const refusal = metricsRefusal(services, request);
      if (refusal) return refusal;
      return services.metrics.registry.metrics().then((body) => ({ status: 200, headers: { 'Content-Type': services.metrics.registry.contentType }, body }));
    }
    const label: Label = { method: request.method, route: 'unmatched', started: performance.now(), ignored: NONE_IGNORED };
    const response = handleApi(request, label);
    if (response instanceof Promise) return response.then((answer) => observe(answer, label));
    // A held answer's own step observes it (heldAnswer).
    if (response instanceof Later) return response;
    return observe(response, label);
  }, { admit });
}

/** What a request's metrics record: its method, its route once matched, and when it came. */
interface Label {
  method: string;
  route: string;
  started: number;
  /** a held answer's ignored parameters (see answerResult) */
  ignored: readonly string[];
}

/** A quick form's files: it reads no body. */
const NO_FILES = Object.freeze([]) as unknown as UploadedFile[];

/** A route's quick form must read its parameters by the route's own declarations, in their order (see QuickForm). */
function checkQuickForm(route: Route): void {
  if (!route.quick) return;
  const names = Object.keys(route.params);
  let last = -1;
  for (const [name, param] of Object.entries(route.quick.params)) {
    const at = names.indexOf(name);
    if (at <= last || route.params[name] !== param) throw new Error(`${route.method} ${route.path}: quick parameter ${name} is not the route's own, in its order`);
    last = at;
  }
}

/** An answer inside a promise's step: a Later there (a poll held after a multipart body) becomes a promise. */
const settledAnswer = (answer: Answer): ApiResponse | Promise<ApiResponse> => (answer instanceof Later ? answer.promise() : answer);

/** One request through handleApi: what the handling of a failure needs to know. */
interface Attempt {
  request: ApiRequest;
  label: Label;
  /** another node of the cluster forwarded it here */
  forwarded: boolean;
  /** the rate-limit key this request spent one request of, if any */
  spent: string | null;
}

/**
 * /metrics tells whoever reads it how busy every organization is, how many queues and sockets it holds and
 * how full its disk is. With CHAT_METRICS_TOKEN it answers a scraper that sends the token as a bearer
 * credential; without, only clients on this machine, so that a server listening on every interface does not
 * publish it.
 */
function metricsRefusal(services: AppServices, request: ApiRequest): ApiResponse | null {
  const token = services.config.metricsToken;
  if (token !== null) {
    const given = /^Bearer (.+)$/.exec(request.authorization)?.[1] ?? '';
    if (sameKey(token, given)) return null;
    const response = errorResponse(new ChatError(ErrorCode.UNAUTHORIZED, 'Metrics need the bearer token the server was configured with (CHAT_METRICS_TOKEN)', 401));
    return { ...response, headers: { ...response.headers, 'WWW-Authenticate': 'Bearer realm="metrics"' } };
  }
  const address = request.clientAddress ?? request.connection?.clientAddress() ?? '';
  if (isLoopback(address)) return null;
  return errorResponse(new ChatError(ErrorCode.UNAUTHORIZED, 'Metrics are served only to this machine unless CHAT_METRICS_TOKEN is set', 403));
}

/**
 * Liveness for operators and load balancers: no authentication, no realm. After a storage failure the
 * server still answers reads but takes no writes until restarted; while its disk is low on space it takes
 * none until there is room: 503 either way, with the reason.
 */
function health(services: AppServices): ApiResponse {
  const { runtime, diskSpace } = services;
  const storageError = runtime.readOnlyReason;
  const lowDiskSpace = diskSpace.refusal();
  const readOnly = storageError !== null || lowDiskSpace !== null;
  const body = {
    status: readOnly ? 'read-only' : 'ok',
    ...(storageError === null ? {} : { storage_error: storageError }),
    ...(lowDiskSpace === null ? {} : { low_disk_space: lowDiskSpace }),
    uptime_seconds: Math.round(process.uptime()),
    realms: runtime.realms.size,
    event_queues: runtime.queues.size,
    log_position: runtime.logPosition,
    ...(services.cluster ? { cluster: services.cluster.health() } : {}),
    ...persistence(services),
    disk_free_bytes: diskSpace.freeBytes(),
    disk_min_free_bytes: diskSpace.minFreeBytes,
  };
  return { status: readOnly ? 503 : 200, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) };
}

/** The periodic snapshot beside the last backup: how much a restore from either would bring back. */
function persistence(services: AppServices) {
  const { snapshotSeq, backup } = services.persistence();
  const age = (at: number) => Math.round((Date.now() - at) / 1000);
  return {
    snapshot_log_position: snapshotSeq,
    last_snapshot_age_seconds: age(services.metrics.lastSnapshotAt),
    last_backup: backup && { time: new Date(backup.at).toISOString(), age_seconds: age(backup.at), bytes: backup.bytes, log_position: backup.seq },
  };
}

const notFound = () => new ChatError(ErrorCode.BAD_REQUEST, 'Not Found', 404);

/**
 * Whose API rate limit a request spends: its user's, or for a bot its owner's, so that a member's bots
 * share the member's budget rather than each adding one (the bots a server owns have their own).
 */
export function rateLimitKey(realmId: number, user: UserProfile): string {
  return `${realmId}:${user.bot?.ownerId ?? user.userId}`;
}

/** Spends one request of the caller's API rate limit, or refuses it (429 with the time to wait). */
export function checkRateLimit(services: AppServices, key: string): void {
  const limiter = services.apiLimiter;
  if (limiter) refuseOver(limiter, limiter.hit(key), 'API usage exceeded rate limit');
}
