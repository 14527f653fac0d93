export interface SavedSnippet {
  id: number;
  title: string;
  content: string;
  /** UNIX seconds */
  dateCreated: number;
}

/** A user's personal state, owned by that user's actor and mutated in place by `applyUserChange`. */
export interface UserState {
  realmId: number;
  userId: number;
  snippets: Map<number, SavedSnippet>;
  nextSnippetId: number;
}

export type UserRecord = Omit<UserState, 'snippets'> & { snippets: SavedSnippet[] };

export function emptyUserState(realmId: number, userId: number): UserState {
  return { realmId, userId, snippets: new Map(), nextSnippetId: 1 };
}

export function userToRecord(state: UserState): UserRecord {
  return { ...state, snippets: [...state.snippets.values()] };
}

export function userFromRecord(record: UserRecord): UserState {
  return { ...emptyUserState(record.realmId, record.userId), ...record, snippets: new Map(record.snippets.map((s) => [s.id, s])) };
}
