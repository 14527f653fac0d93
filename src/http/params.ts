import { z } from 'zod';
import { badRequest, ChatError, ErrorCode } from '../../actors/errors.ts';

/**
 * Declares one request parameter: how its form text becomes a typed value (the wire conventions: plain
 * text, integers and booleans as text, lists and objects as JSON text) and the zod schema the value must
 * then satisfy. A route declares its parameters once, as a record of these.
 */
export class Param<T, Optional extends boolean = false> {
  private constructor(
    private readonly convert: (raw: string, name: string) => unknown,
    private readonly schema: z.ZodType<T>,
    readonly isOptional: Optional,
    readonly fallback: T | undefined,
    /** the schema accepts whatever `convert` returns (the kind's own plain schema): it is not run */
    private readonly trusted: boolean,
  ) {}

  static of<T>(convert: (raw: string, name: string) => unknown, schema: z.ZodType<T>, trusted = false): Param<T> {
    return new Param(convert, schema, false, undefined, trusted);
  }

  /** May be absent; then the handler sees undefined. */
  optional(): Param<T, true> {
    return new Param(this.convert, this.schema, true, undefined, this.trusted);
  }

  /** May be absent; then the handler sees this value. */
  default(value: T): Param<T> {
    return new Param(this.convert, this.schema, false, value, this.trusted);
  }

  read(raw: string | undefined, name: string): T | undefined {
    if (raw === undefined) {
      if (this.fallback !== undefined || this.isOptional) return this.fallback;
      throw new ChatError(ErrorCode.REQUEST_VARIABLE_MISSING, `Missing '${name}' argument`, 400, { var_name: name });
    }
    const value = this.convert(raw, name);
    // A zod parse per parameter is a good part of a long-poll's cost (GET /events, once per delivery).
    if (this.trusted) return value as T;
    const result = this.schema.safeParse(value);
    if (!result.success) throw badRequest(describeIssue(name, result.error.issues[0]));
    return result.data;
  }
}

function describeIssue(name: string, issue: z.core.$ZodIssue | undefined): string {
  if (!issue) return `Invalid ${name}`;
  const where = issue.path.map((part) => (typeof part === 'number' ? `[${part}]` : `[${JSON.stringify(String(part))}]`)).join('');
  return where ? `${name}${where}: ${issue.message}` : `Invalid ${name}: ${issue.message}`;
}

const asText = (raw: string) => raw;

function asInteger(raw: string, name: string): number {
  const text = raw.trim();
  if (!/^-?\d+$/.test(text) || !Number.isSafeInteger(Number(text))) throw badRequest(`${name} is not an integer`);
  return Number(text);
}

function asBoolean(raw: string, name: string): boolean {
  const text = raw.trim().toLowerCase();
  if (text === 'true') return true;
  if (text === 'false') return false;
  throw badRequest(`${name} is not a boolean`);
}

function asJson(raw: string, name: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    throw badRequest(`"${name}" is not valid JSON.`);
  }
}

const ANY_STRING = z.string();
const ANY_NUMBER = z.number();
const BOOLEAN = z.boolean();

/** The parameter kinds of the API. Without a schema of its own, a kind's conversion is its whole check. */
export const p = {
  string: <T extends string = string>(schema?: z.ZodType<T>) => Param.of(asText, schema ?? (ANY_STRING as unknown as z.ZodType<T>), schema === undefined),
  int: <T extends number = number>(schema?: z.ZodType<T>) => Param.of(asInteger, schema ?? (ANY_NUMBER as unknown as z.ZodType<T>), schema === undefined),
  /** plain text turned into any value by its schema (e.g. `unlimited` or a number of days) */
  text: <T>(schema: z.ZodType<T>) => Param.of(asText, schema),
  bool: () => Param.of(asBoolean, BOOLEAN, true),
  json: <T>(schema: z.ZodType<T>) => Param.of(asJson, schema),
};

export type ParamSpec = Record<string, Param<unknown, boolean>>;

export type ParamsOf<S extends ParamSpec> = {
  [K in keyof S]: S[K] extends Param<infer T, infer O> ? (O extends true ? T | undefined : T) : never;
};

/**
 * Reads every declared parameter from the request's values; returns the typed values and the names of
 * parameters the request sent that the route does not know (for `ignored_parameters_unsupported`).
 */
export function readParams<S extends ParamSpec>(
  spec: S,
  values: Map<string, string>,
): { params: ParamsOf<S>; ignored: readonly string[] } {
  const params: Record<string, unknown> = {};
  for (const [name, param] of entriesOf(spec)) params[name] = param.read(values.get(name), name);
  const ignored: string[] = [];
  for (const name of values.keys()) if (!(name in spec)) ignored.push(name);
  return { params: params as ParamsOf<S>, ignored: ignored.length ? ignored : NONE_IGNORED };
}

/**
 * The parameters of `spec` read straight from a query string (a route's quick form, see QuickForm), without
 * the Map of form values: null when the query names a parameter outside `spec` or one twice, or has
 * anything to decode (`%`, `+`), which the general path reads (readForm, readParams). Pairs are split as
 * form.ts's readUrlEncoded splits them; each value is read by its declaration, in the spec's order, as
 * readParams reads it.
 */
export function readQuickParams<S extends ParamSpec>(spec: S, query: string): ParamsOf<S> | null {
  if (query.includes('%') || query.includes('+')) return null;
  const entries = entriesOf(spec);
  const raw: (string | undefined)[] = new Array<string | undefined>(entries.length).fill(undefined);
  let start = query.charCodeAt(0) === QUESTION_MARK ? 1 : 0;
  while (start <= query.length) {
    let end = query.indexOf('&', start);
    if (end < 0) end = query.length;
    if (end > start) {
      const equals = query.indexOf('=', start);
      const named = equals < 0 || equals > end;
      const nameEnd = named ? end : equals;
      // The name is compared where it stands in the query, not copied out of it first.
      let index = 0;
      while (index < entries.length && !spells(query, start, nameEnd, entries[index]![0])) index++;
      if (index === entries.length || raw[index] !== undefined) return null;
      raw[index] = named ? '' : query.slice(equals + 1, end);
    }
    start = end + 1;
  }
  const params: Record<string, unknown> = {};
  for (let i = 0; i < entries.length; i++) {
    const [name, param] = entries[i]!;
    params[name] = param.read(raw[i], name);
  }
  return params as ParamsOf<S>;
}

const QUESTION_MARK = 0x3f;

/** Whether `query` from `start` to `end` is `name`. */
const spells = (query: string, start: number, end: number, name: string) => end - start === name.length && query.startsWith(name, start);

export const NONE_IGNORED: readonly string[] = Object.freeze([]);
const specEntries = new WeakMap<ParamSpec, [string, Param<unknown, boolean>][]>();

/** A route's parameters as a list, made once per route rather than once per request. */
function entriesOf(spec: ParamSpec): [string, Param<unknown, boolean>][] {
  let entries = specEntries.get(spec);
  if (!entries) specEntries.set(spec, (entries = Object.entries(spec)));
  return entries;
}

/**
 * `include_subscribers`: a boolean, or `partial` (feature level 412; JSON-encoded or plain). The document lets
 * a server answer `partial` with complete `subscribers` lists, which this server does: it keeps every list in
 * memory and sends what it has, without the per-channel choice of a subset.
 */
export const includeSubscribers = () =>
  p.text(z.string().transform((raw, context) => {
    const text = raw.trim().toLowerCase();
    if (text === 'true' || text === 'partial' || text === '"partial"') return true;
    if (text === 'false') return false;
    context.addIssue({ code: 'custom', message: 'is not a boolean or "partial"' });
    return z.NEVER;
  }));
