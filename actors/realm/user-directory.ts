import { addressesFor, displayEmail, visibilityAllows, visibilityOf } from './email-visibility.ts';
import { profileDataOf } from './profile-fields/views.ts';
import type { RealmState, Role, UserProfile } from './state.ts';
import { realmVersion } from './version.ts';
import { personView } from './views.ts';

/** The whole user list as one viewer role sees it, as JSON, and where each user's object lies in it. */
interface Directory {
  version: number;
  key: string;
  json: string;
  /** user id -> [start, end) of the user's object in `json` */
  spans: Map<number, [number, number]>;
}

/**
 * Lists kept per realm between two of its changes: one per combination of viewer role and parameters in
 * use (a realm's members are mostly of one or two roles, and clients send the same parameters).
 */
const MAX_LISTS = 6;
const lists = new WeakMap<RealmState, Directory[]>();

/**
 * GET /users for a viewer who may access every user: the JSON array of every user's object, serialized once
 * per realm change (realm/version.ts) for each viewer role and parameters, then shared by every such viewer.
 * The addresses a viewer may read depend only on its role, except its own, whose object is made per request.
 * `shared`: an object standing for the text while it is shared by other viewers (null when this viewer's
 * own object made it its own), for callers that keep what they derive from it (the encoded answer).
 */
export function userDirectoryJson(state: RealmState, viewer: UserProfile, clientExtavatar: boolean, withProfileData: boolean): { json: string; shared: object | null } {
  const directory = cachedDirectory(state, viewer.role, clientExtavatar, withProfileData);
  const span = directory.spans.get(viewer.userId);
  if (!span) return { json: directory.json, shared: directory };
  const own = JSON.stringify(userObject(state, viewer, addressesFor(state, viewer.userId, viewer), clientExtavatar, withProfileData));
  // Mostly the same as the role's view of the user (unless its setting hides its address from its own role).
  if (directory.json.slice(span[0], span[1]) === own) return { json: directory.json, shared: directory };
  return { json: directory.json.slice(0, span[0]) + own + directory.json.slice(span[1]), shared: null };
}

function cachedDirectory(state: RealmState, role: Role, clientExtavatar: boolean, withProfileData: boolean): Directory {
  const version = realmVersion(state);
  const key = `${role}:${clientExtavatar}:${withProfileData}`;
  let kept = lists.get(state);
  if (kept === undefined || kept[0]?.version !== version) lists.set(state, (kept = []));
  const found = kept.find((directory) => directory.key === key);
  if (found) return found;
  const spans = new Map<number, [number, number]>();
  let json = '[';
  for (const user of state.users.values()) {
    if (json.length > 1) json += ',';
    const addresses = { email: displayEmail(state, user), delivery_email: visibilityAllows(visibilityOf(user), role) ? user.email : null };
    const start = json.length;
    json += JSON.stringify(userObject(state, user, addresses, clientExtavatar, withProfileData));
    spans.set(user.userId, [start, json.length]);
  }
  json += ']';
  const directory = { version, key, json, spans };
  if (kept.length === MAX_LISTS) kept.shift();
  kept.push(directory);
  return directory;
}

function userObject(state: RealmState, user: UserProfile, addresses: { email: string; delivery_email: string | null }, clientExtavatar: boolean, withProfileData: boolean) {
  return personView(user, addresses, clientExtavatar, withProfileData ? profileDataOf(state.profileFields, user.userId) : null);
}
