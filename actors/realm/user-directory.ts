import { addressesFor, displayEmail, visibilityAllows, visibilityOf } from './email-visibility.ts';
import { profileDataOf } from './profile-fields/views.ts';
import type { RealmState, Role, UserProfile } from './state.ts';
import { realmVersion } from './version.ts';
import { personView } from './views.ts';

type Addresses = { email: string; delivery_email: string | null };

/** How one kind of list shows the users: which list each goes in, and its object given the addresses the viewer may read. */
export interface ListKind {
  /** names the kind and its parameters: lists are shared by the viewers of one role asking for the same key */
  key: string;
  lists: number;
  listOf: (user: UserProfile) => number;
  objectOf: (user: UserProfile, addresses: Addresses) => object;
}

/** The user lists as one viewer role sees them, as JSON arrays, and where each user's object lies in its list. */
interface Directory {
  version: number;
  key: string;
  lists: string[];
  /** user id -> [list, start, end) of the user's object in `lists[list]` */
  spans: Map<number, [number, number, number]>;
}

/**
 * Directories kept per realm between two of its changes: one per combination of viewer role and parameters
 * in use (a realm's members are mostly of one or two roles, and clients send the same parameters), for GET
 * /users and for registration.
 */
const MAX_DIRECTORIES = 8;
const directories = new WeakMap<RealmState, Directory[]>();

/**
 * A user list as JSON text in parts, one after another (the shared text, or it cut around the viewer's own
 * object, so that a large list is not copied per viewer), with `shared`: an object standing for the text while
 * other viewers share it (null when the viewer's own object made it its own).
 */
export interface DirectoryList {
  parts: readonly string[];
  shared: object | null;
}

/**
 * Every user's object as a viewer who may access every user sees them, in `kind.lists` JSON arrays:
 * serialized once per realm change (realm/version.ts) for each viewer role and kind, then shared by every
 * such viewer. The addresses a viewer may read depend only on its role, except its own, whose object is made
 * per request. `shared` is for callers that keep what they derive from it (an encoded answer).
 */
export function sharedUserLists(state: RealmState, viewer: UserProfile, kind: ListKind): DirectoryList[] {
  const directory = cachedDirectory(state, viewer.role, kind);
  const span = directory.spans.get(viewer.userId);
  return directory.lists.map((json, list) => {
    if (!span || span[0] !== list) return { parts: [json], shared: directory };
    const own = JSON.stringify(kind.objectOf(viewer, addressesFor(state, viewer.userId, viewer)));
    // Mostly the same as the role's view of the user (unless its setting hides its address from its own role).
    if (json.slice(span[1], span[2]) === own) return { parts: [json], shared: directory };
    return { parts: [json.slice(0, span[1]), own, json.slice(span[2])], shared: null };
  });
}

/** GET /users for a viewer who may access every user: the JSON array of every user's object (sharedUserLists). */
export function userDirectoryJson(state: RealmState, viewer: UserProfile, clientExtavatar: boolean, withProfileData: boolean): { json: string; shared: object | null } {
  const [list] = sharedUserLists(state, viewer, {
    key: `users:${clientExtavatar}:${withProfileData}`,
    lists: 1,
    listOf: () => 0,
    objectOf: (user, addresses) => personView(user, addresses, clientExtavatar, withProfileData ? profileDataOf(state.profileFields, user.userId) : null),
  });
  return { json: list!.parts.join(''), shared: list!.shared };
}

function cachedDirectory(state: RealmState, role: Role, kind: ListKind): Directory {
  const version = realmVersion(state);
  const key = `${role}:${kind.key}`;
  let kept = directories.get(state);
  if (kept === undefined || kept[0]?.version !== version) directories.set(state, (kept = []));
  const found = kept.find((directory) => directory.key === key);
  if (found) return found;
  const spans = new Map<number, [number, number, number]>();
  const lists = new Array<string>(kind.lists).fill('[');
  for (const user of state.users.values()) {
    const list = kind.listOf(user);
    let json = lists[list]!;
    if (json.length > 1) json += ',';
    const addresses = { email: displayEmail(state, user), delivery_email: visibilityAllows(visibilityOf(user), role) ? user.email : null };
    const start = json.length;
    json += JSON.stringify(kind.objectOf(user, addresses));
    spans.set(user.userId, [list, start, json.length]);
    lists[list] = json;
  }
  const directory = { version, key, lists: lists.map((json) => `${json}]`), spans };
  if (kept.length === MAX_DIRECTORIES) kept.shift();
  kept.push(directory);
  return directory;
}
