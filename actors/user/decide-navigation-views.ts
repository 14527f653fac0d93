import { ChatError, ErrorCode, badRequest } from '../errors.ts';
import type { UserChange } from './changes.ts';
import type { UserCommand } from './commands.ts';
import type { NavigationView, UserState } from './state.ts';

/** The views the original's web app has built in: a user only pins or hides them, never names them. */
export const BUILT_IN_VIEWS: ReadonlySet<string> = new Set([
  'inbox', 'recent', 'feed', 'drafts', 'narrow/has/reaction/sender/me', 'narrow/is/mentioned', 'narrow/is/starred', 'scheduled', 'reminders',
]);
/** The original stores both as unbounded text; every registration of the user carries them, so they are bounded. */
export const MAX_NAVIGATION_VIEW_TEXT_LENGTH = 1000;

type NavigationViewCommand = Extract<UserCommand, { type: 'navigation_view.add' | 'navigation_view.update' | 'navigation_view.remove' }>;

/** Saved left-sidebar views, checked as the original checks them; fragments and names are trimmed. */
export function decideNavigationView(state: UserState, command: NavigationViewCommand): UserChange[] {
  const fragment = checkText('fragment', command.fragment);
  switch (command.type) {
    case 'navigation_view.add': {
      const name = command.name === undefined ? undefined : checkText('name', command.name);
      if (BUILT_IN_VIEWS.has(fragment)) {
        if (name !== undefined) throw badRequest('Built-in views cannot have a custom name.');
      } else if (name === undefined) {
        throw badRequest('Custom views must have a valid name.');
      }
      if (state.navigationViews.some((view) => view.fragment === fragment || (name !== undefined && view.name === name))) throw badRequest('Navigation view already exists.');
      if (state.navigationViews.length >= command.maxViews) throw badRequest(`You already have ${command.maxViews} navigation views, the most you may have`);
      const view: NavigationView = { fragment, isPinned: command.isPinned, name: name ?? null };
      return [{ type: 'navigation_view.added', view }];
    }
    case 'navigation_view.update': {
      const name = command.name === undefined ? undefined : checkText('name', command.name);
      if (BUILT_IN_VIEWS.has(fragment) && name !== undefined) throw badRequest('Built-in views cannot have a custom name.');
      if (name !== undefined && state.navigationViews.some((view) => view.name === name)) throw badRequest('Navigation view already exists.');
      requireView(state, fragment);
      return [{ type: 'navigation_view.updated', fragment, isPinned: command.isPinned, name }];
    }
    case 'navigation_view.remove':
      requireView(state, fragment);
      return [{ type: 'navigation_view.removed', fragment }];
  }
}

function checkText(what: string, text: string): string {
  const trimmed = text.trim();
  if (trimmed === '') throw badRequest(`${what} cannot be blank`);
  if (trimmed.length > MAX_NAVIGATION_VIEW_TEXT_LENGTH) throw badRequest(`${what} is too long (limit: ${MAX_NAVIGATION_VIEW_TEXT_LENGTH} characters)`);
  return trimmed;
}

function requireView(state: UserState, fragment: string): void {
  if (!state.navigationViews.some((view) => view.fragment === fragment)) throw new ChatError(ErrorCode.BAD_REQUEST, 'Navigation view does not exist.', 404);
}
