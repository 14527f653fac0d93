/**
 * Writes actors/wire/openapi.generated.ts: TypeScript types of the whole API from the document this server
 * follows (docs/zulip-openapi.yaml), by openapi-typescript, with the neutral names of shared/spec/interface.md
 * in place of the vendor-named ones. Run by `npm run wire-types`; its output is committed, and the event and
 * registration builders are typed by it (actors/wire/events.ts), so that a missing key or a wrong shape is a
 * compile error. Every property counts as required (the document rarely says which are), except those its own
 * description says are present only sometimes (see `corrected`): a builder leaves out only what the document or
 * a wrapper type says it may.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import { parse } from 'yaml';

const ROOT = new URL('..', import.meta.url);
const DOCUMENT = new URL('docs/zulip-openapi.yaml', ROOT);
const OUT = new URL('actors/wire/openapi.generated.ts', ROOT);

/** The document's vendor names and this server's (shared/spec/interface.md), as whole words of the output. */
const NEUTRAL_NAMES: [RegExp, string][] = [
  [/\bzulip_feature_level\b/g, 'svc_feature_level'],
  [/\bzulip_version\b/g, 'svc_version'],
  [/\bzulip_merge_base\b/g, 'svc_merge_base'],
  [/"zulip_extra_emoji"/g, '"svc_extra_emoji"'],
  [/\bclient_gravatar\b/g, 'client_extavatar'],
  [/\bgiphy_api_key\b/g, 'gif_api_key'],
  // The registration's key; the event keeps its type `has_zoom_token`, as clients know it.
  [/^(\s+)has_zoom_token(\??):/gm, '$1has_video_token$2:'],
  // One neutral path for both vendors' push token paths: the first keeps its operations under it.
  [/"\/users\/me\/apns_device_token"/g, '"/users/me/push_device_token"'],
  [/"\/users\/me\/android_gcm_reg_id"/g, '"/users/me/push_device_token (fcm)"'],
];

/**
 * A property whose own description says it comes only under some condition ("Only present if the changed
 * property was `description`", "Present only if the setting to be changed is `default_language`", "Not present
 * for clients that support ..."): the original leaves it out otherwise, so the type makes it optional.
 */
const CONDITIONAL = /\b(only (be )?present (if|when|for)|present only (if|when|for)|not present (if|when|for)|included only (if|when)|only included (if|when))\b/i;

/** What gives a schema a shape; a property schema with none of these only repeats a key of another part. */
const SHAPE_KEYS = ['type', '$ref', 'allOf', 'oneOf', 'anyOf', 'enum', 'items', 'properties', 'additionalProperties'];

type Node = Record<string, unknown>;
const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null;

/**
 * Where the document's event variants are stricter than the original (shared/reference/zulip-behaviour.md):
 * `optional`, keys it makes required (nothing in their description says otherwise) that the original leaves out
 * when they do not apply; `values`, values of a key's enum it leaves out; `only`, for an object the original
 * sends in part (the changed fields) where the document names a shared schema, the only keys it requires (the
 * variant gets its own copy, the shared schema stays as it is); `add`, keys the original sends that the document
 * does not name, optional. `at` names the object of the variant they
 * belong to (a path of property names; none: the event itself).
 */
interface EventCorrection {
  /** a shared schema by name, instead of an event variant */
  schema?: string;
  type?: string;
  op?: string;
  at?: string[];
  optional?: string[] | 'all';
  values?: Record<string, string[]>;
  only?: string[];
  /** keys the original sends that the document does not name (optional) */
  add?: Record<string, Node>;
  why: string;
}

const EVENT_CORRECTIONS: EventCorrection[] = [
  { type: 'user_status', optional: ['away', 'status_text', 'emoji_name', 'emoji_code', 'reaction_type'], why: 'do_update_user_status sends only what the request changed' },
  { type: 'user_status', values: { reaction_type: [''] }, why: 'a status without an emoji has reaction_type "" (as its own description says)' },
  { type: 'navigation_view', op: 'update', at: ['data'], optional: ['name', 'is_pinned'], why: 'the update carries only the changed fields' },
  { type: 'realm_bot', op: 'update', at: ['bot'], only: ['user_id'], why: 'do_change_* send the bot id and the changed field' },
  { type: 'channel_folder', op: 'update', at: ['data'], optional: ['rendered_description'], why: 'it comes with a new description only' },
  { type: 'realm', op: 'update_dict', at: ['data'], only: [], why: 'do_set_realm_property and do_change_realm_permission_group_setting send the changed setting' },
  { type: 'user_group', op: 'update', at: ['data'], only: [], why: 'do_update_user_group_* send the changed fields' },
  { schema: 'EmojiReactionEvent_allOf_user', optional: ['is_mirror_dummy'], why: 'a reaction event names its user by id, email and full name only (notify_reaction_update)' },
  { type: 'message', add: { local_message_id: { type: 'string' } }, why: "the sender's queue that sent the message with a `local_id` gets it back (the original's local echo)" },
  { schema: 'register_queue_200_response', optional: 'all', why: 'each key comes with its fetch type (POST /register)' },
  { schema: 'UserBase', optional: ['bot_type', 'bot_owner_id'], why: 'format_user_row sets them for bots only' },
  { schema: 'LegacyPresenceFormat', optional: ['pushable'], why: 'its description: not present in the `aggregated` object' },
  { schema: 'UserBase', optional: ['timezone'], why: 'format_user_row deletes it for a spectator (acting_user None), with is_billing_admin' },
  { schema: 'Subscription', optional: ['partial_subscribers'], why: 'sent only instead of `subscribers`, when a client asked for partial lists (its description)' },
  { schema: 'register_queue_200_response_allOf_never_subscribed_inner', optional: ['partial_subscribers'], why: 'as for a subscription: only instead of `subscribers`, for partial lists' },
  { schema: 'Invite', optional: ['email', 'link_url'], why: 'its description: `email` is not present for a reusable link, `link_url` not for an email invitation (do_get_invites_controlled_by_user)' },
  { schema: 'register_queue_200_response_allOf_user_status', optional: ['away', 'status_text', 'emoji_name', 'emoji_code', 'reaction_type'], why: "format_user_status sends only the keys a user's status sets (the key's description: users who have set a status)" },
];

/**
 * Where the document names the wrong schema for a property (shared/reference/zulip-behaviour.md): `at`, the
 * property names from a schema (through its `allOf` parts, `items` for an array's), replaced by `$ref` `ref`.
 */
const REF_CORRECTIONS: { schema: string; at: string[]; ref: string; why: string }[] = [
  { schema: 'register_queue_200_response', at: ['reminders', 'items'], ref: 'Reminder', why: "get_undelivered_reminders sends reminders (`reminder_id`, `reminder_target_message_id`), as GET /reminders does" },
];

/** Applies REF_CORRECTIONS; a rule that matches nothing fails the run. */
function refCorrections(document: Node): void {
  for (const rule of REF_CORRECTIONS) {
    const schema = resolved(document, { $ref: `#/components/schemas/${rule.schema}` });
    let holders: Node[] = schema ? parts(document, schema) : [];
    const last = rule.at[rule.at.length - 1]!;
    for (const name of rule.at.slice(0, -1)) {
      holders = holders.flatMap((part) => {
        const next = isNode(part.properties) ? part.properties[name] : part[name];
        return isNode(next) ? [next] : [];
      });
    }
    const holder = holders.find((node) => isNode(node[last]) || (isNode(node.properties) && isNode(node.properties[last])));
    if (!holder) throw new Error(`REF_CORRECTIONS: ${rule.schema} ${rule.at.join('.')} not found in the document`);
    if (isNode(holder[last])) holder[last] = { $ref: `#/components/schemas/${rule.ref}` };
    else (holder.properties as Node)[last] = { $ref: `#/components/schemas/${rule.ref}` };
  }
}

/** Which keys the `required` lists of some schemas leave out, by the schema object. */
type Optional = Map<Node, Set<string>>;

/** A schema reached through its `$ref`s ("#/components/schemas/Name"), or itself. */
function resolved(document: Node, node: unknown): Node | undefined {
  if (!isNode(node)) return undefined;
  const ref = node.$ref;
  if (typeof ref !== 'string') return node;
  let at: unknown = document;
  for (const part of ref.replace(/^#\//, '').split('/')) at = isNode(at) ? at[part] : undefined;
  return resolved(document, at);
}

/** The parts of a schema that hold its own properties: itself, or its `allOf` parts. */
function parts(document: Node, node: Node): Node[] {
  const all = Array.isArray(node.allOf) ? node.allOf.map((part) => resolved(document, part)).filter((part) => part !== undefined) : [];
  return [node, ...all].filter((part) => isNode(part.properties));
}

/** The one enum value of a property (an event's `type` or `op`), through `$ref` and `allOf`. */
function constantOf(document: Node, node: unknown): string | undefined {
  const schema = resolved(document, node);
  if (!schema) return undefined;
  if (Array.isArray(schema.enum) && schema.enum.length === 1) return String(schema.enum[0]);
  for (const part of Array.isArray(schema.allOf) ? schema.allOf : []) {
    const value = constantOf(document, part);
    if (value !== undefined) return value;
  }
  return undefined;
}

/** An object schema with the properties of every part of `schema` (their shapes), requiring only `keys`. */
function partialCopy(document: Node, schema: unknown, keys: string[]): Node {
  const properties: Node = {};
  const gather = (node: Node | undefined): void => {
    if (!node) return;
    for (const part of Array.isArray(node.allOf) ? node.allOf : []) gather(resolved(document, part));
    for (const [key, value] of Object.entries(isNode(node.properties) ? node.properties : {})) {
      if (isNode(value) && SHAPE_KEYS.some((shape) => shape in value)) properties[key] = value;
    }
  };
  gather(resolved(document, schema));
  return { type: 'object', additionalProperties: false, properties, required: keys };
}

/**
 * Applies EVENT_CORRECTIONS' enum values to the document and returns their optional keys by the object that
 * holds them; a rule that matches nothing fails the run.
 */
function eventCorrections(document: Node): Optional {
  const union = resolved(document, { $ref: '#/components/schemas/get_events_200_response_allOf_events_inner' });
  const variants = (Array.isArray(union?.oneOf) ? union.oneOf : []).map((variant) => resolved(document, variant)).filter((variant) => variant !== undefined);
  const out: Optional = new Map();
  for (const rule of EVENT_CORRECTIONS) {
    const wanted = [...(rule.optional === 'all' ? [] : (rule.optional ?? [])), ...Object.keys(rule.values ?? {}), ...(rule.only ?? []), ...Object.keys(rule.add ?? {})];
    let found = 0;
    const targets = rule.schema === undefined ? variants : [resolved(document, { $ref: `#/components/schemas/${rule.schema}` })].filter((node) => node !== undefined);
    for (const variant of targets) {
      const own = parts(document, variant);
      const field = (name: string) => own.map((part) => constantOf(document, (part.properties as Node)[name])).find((value) => value !== undefined);
      if (rule.schema === undefined && (field('type') !== rule.type || (rule.op !== undefined && field('op') !== rule.op))) continue;
      let objects = own;
      const path = rule.at ?? [];
      for (const [index, name] of path.entries()) {
        if (rule.only && index === path.length - 1) {
          const holder = objects.find((part) => name in (part.properties as Node))!;
          const copy = partialCopy(document, (holder.properties as Node)[name], rule.only);
          (holder.properties as Node)[name] = copy;
          found += rule.only.filter((key) => key in (copy.properties as Node)).length;
          objects = [];
          break;
        }
        objects = objects.flatMap((part) => parts(document, resolved(document, (part.properties as Node)[name]) ?? {}));
      }
      for (const object of objects) {
        const properties = object.properties as Node;
        const keys = out.get(object) ?? new Set();
        for (const key of rule.optional === 'all' ? Object.keys(properties) : (rule.optional ?? [])) if (key in properties) keys.add(key), found++;
        for (const [key, schema] of Object.entries(rule.add ?? {})) if (object === objects[0]) properties[key] = schema, keys.add(key), found++;
        for (const [key, values] of Object.entries(rule.values ?? {})) {
          const property = properties[key];
          if (isNode(property) && Array.isArray(property.enum)) property.enum.push(...values), found++;
        }
        out.set(object, keys);
      }
    }
    if (found < wanted.length) throw new Error(`EVENT_CORRECTIONS: ${rule.schema ?? rule.type} ${rule.op ?? ''} ${wanted.join(',')} not all found in the document`);
  }
  return out;
}

/**
 * The document as the types should read it. openapi-typescript makes every property of an `allOf` part optional
 * unless the part lists `required` (the document's event variants written with `allOf` list none), and with
 * `propertiesRequiredByDefault` every other property required: each object without a `required` list gets one
 * naming its properties, less those whose description says they are conditional, those EVENT_CORRECTIONS
 * names, and those an `allOf` part only repeats from the part it extends (`{}`, `{nullable: true}`: no shape of
 * their own), whose own schema says whether they are required.
 */
function corrected(node: unknown, optional: Optional): void {
  if (Array.isArray(node)) {
    for (const item of node) corrected(item, optional);
    return;
  }
  if (!isNode(node)) return;
  const properties = node.properties;
  if (isNode(properties) && Object.values(properties).every(isNode) && node.required === undefined) {
    const leftOut = optional.get(node);
    node.required = Object.keys(properties).filter((key) => {
      const property = properties[key] as Node;
      if (!SHAPE_KEYS.some((shape) => shape in property) || leftOut?.has(key)) return false;
      return !(typeof property.description === 'string' && CONDITIONAL.test(property.description));
    });
  }
  for (const [key, value] of Object.entries(node)) if (key !== 'example' && key !== 'examples') corrected(value, optional);
}

export async function wireTypes(): Promise<string> {
  const document = parse(readFileSync(DOCUMENT, 'utf8')) as OpenAPI3;
  refCorrections(document as unknown as Node);
  corrected(document, eventCorrections(document as unknown as Node));
    // A default does not make a key present: the original leaves out some that have one (`display_in_profile_summary`).
  const ast = await openapiTS(document, { propertiesRequiredByDefault: true, defaultNonNullable: false });
  let text = astToString(ast);
  for (const [pattern, name] of NEUTRAL_NAMES) text = text.replace(pattern, name);
  return `// Generated by src/wire-types.ts (npm run wire-types) from docs/zulip-openapi.yaml: do not edit.\n${text}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(OUT, await wireTypes());
  console.log(`wrote ${fileURLToPath(OUT)}`);
}
