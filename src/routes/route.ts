import type { Later } from '../../actors/later.ts';
import type { RealmState, UserProfile } from '../../actors/realm/state.ts';
import type { AppServices } from '../services.ts';
import type { HandlerResult } from '../http/envelope.ts';
import type { ParamSpec, ParamsOf } from '../http/params.ts';
import type { UploadedFile } from '../http/form.ts';
import type { ApiRequest } from '../http/request.ts';

export type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/**
 * 'user': HTTP Basic credentials required; 'public': none needed (the caller may still send them);
 * 'optional': credentials checked when sent, as for 'user', else the caller is anonymous (user null).
 */
export type AuthMode = 'user' | 'public' | 'optional';

export interface RouteContext<A extends AuthMode> {
  services: AppServices;
  realm: RealmState;
  user: A extends 'user' ? UserProfile : UserProfile | null;
  request: ApiRequest;
  /** the multipart body's files, for routes with `files` (empty otherwise) */
  files: UploadedFile[];
}

export interface Route<S extends ParamSpec = ParamSpec, A extends AuthMode = AuthMode, Q extends ParamSpec = ParamSpec> {
  method: Method;
  /** relative to /api/v1 (to the site root with `root`), with {name} for path parameters */
  path: string;
  auth: A;
  /**
   * A page outside the API, at `path` from the site root: links people follow from a mail, whose key is the
   * credential (auth 'public'), and uploaded files, which clients fetch with their API credentials (auth 'user').
   */
  root?: boolean;
  /** reads the files of a multipart body into the context's `files` */
  files?: boolean;
  params: S;
  /** long-polls are not counted against the per-user rate limit */
  rateLimited?: boolean;
  /**
   * false: not counted against the budget of callers without credentials. For image files, which a page
   * loads by the dozen and which cost a file read; every other request without credentials is counted.
   */
  anonymousBudget?: false;
  /**
   * Refuses a caller before its parameters are read: a caller without the right must not learn the
   * parameter rules, nor make the server do expensive work (hashing a password) first.
   */
  authorize?(user: UserProfile, realm: RealmState): void;
  /**
   * Looks at the request before its body is read, knowing only the length it declares (null: sent in
   * chunks, undeclared), and throws to refuse it unread: an upload the caller's quota or the disk cannot
   * take is turned away before its bytes come in.
   */
  admit?(context: Omit<RouteContext<A>, 'request' | 'files'>, declaredBytes: number | null): void;
  /** a Later only for a held long-poll (not rate limited: see dispatch's answerWith) */
  handle(context: RouteContext<A>, params: ParamsOf<S>): Promise<HandlerResult> | Later<HandlerResult> | HandlerResult;
  /**
   * The route's most frequent request answered without the general reading of its parameters (a
   * long-poll's, once per delivery of a fan-out): see QuickForm.
   */
  quick?: QuickForm<A, Q>;
}

/**
 * A route's common request, read straight from its query string: taken when the request has no body and
 * no path parameters, and its query names only parameters of `params` (declared by the same Param objects
 * as the route's, in the same order), each once, with nothing to decode (readQuickParams). Anything else
 * (another parameter, a `%`, a body) goes the general way, and so does a request `handle` returns null
 * for. Authentication, rate limiting and the answer's envelope are the general path's; a parameter's
 * error is the one the general path gives, since the same declarations read it.
 */
export interface QuickForm<A extends AuthMode = AuthMode, Q extends ParamSpec = ParamSpec> {
  params: Q;
  handle(context: RouteContext<A>, params: ParamsOf<Q>): Later<HandlerResult> | HandlerResult | null;
}

/** Declares a route, keeping its parameter types for the handler. */
export function route<S extends ParamSpec, A extends AuthMode, Q extends ParamSpec = ParamSpec>(definition: Route<S, A, Q>): Route {
  return definition as unknown as Route;
}
