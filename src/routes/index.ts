import { authRoutes } from './auth.ts';
import { eventRoutes } from './events.ts';
import type { Route } from './route.ts';
import { savedSnippetRoutes } from './saved-snippets.ts';
import { userGroupRoutes } from './user-groups.ts';
import { userRoutes } from './users.ts';

/** Every API area's route table. */
export const allRoutes: readonly Route[] = [...authRoutes, ...userRoutes, ...eventRoutes, ...savedSnippetRoutes, ...userGroupRoutes];
