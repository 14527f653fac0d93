import type { Builder, InitialStateOptions, RegistrationView } from './builder.ts';
import { realmUserState } from './builders/realm-user.ts';
import { realmState } from './builders/realm.ts';
import { savedSnippetsState } from './builders/saved-snippets.ts';
import { userGroupsState } from './builders/user-groups.ts';

export type { InitialStateOptions, RegistrationView };

/** The fetch types whose initial state this server builds, each from its own area's builder. */
const builders: Record<string, Builder> = {
  realm: realmState,
  realm_user: realmUserState,
  saved_snippets: savedSnippetsState,
  user_groups: userGroupsState,
};

export const SUPPORTED_FETCH_TYPES = Object.keys(builders);

/** The registration state for the requested fetch types, from one consistent view of the realm. */
export function initialState(view: RegistrationView, options: InitialStateOptions): Record<string, unknown> {
  const state: Record<string, unknown> = {};
  for (const [type, build] of Object.entries(builders)) {
    if (options.fetchTypes === null || options.fetchTypes.includes(type)) Object.assign(state, build(view, options));
  }
  return state;
}
