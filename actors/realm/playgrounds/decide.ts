import { badRequest } from '../../errors.ts';
import { parseUriTemplate } from '../linkifiers/template.ts';
import type { RealmState } from '../state.ts';
import type { PlaygroundChange } from './changes.ts';
import type { PlaygroundCommand } from './commands.ts';
import { requireAdmin } from '../administer.ts';

/** The original's model limits. */
export const MAX_PYGMENTS_LANGUAGE_LENGTH = 40;
/**
 * The original has no limits on these; every registration carries the whole list, and every change sends it
 * whole, so there are: far more than the few an organization offers per language.
 */
export const MAX_PLAYGROUNDS = 100;
export const MAX_PLAYGROUND_TEXT_LENGTH = 1000;
const PYGMENTS_LANGUAGE = /^[ a-zA-Z0-9_+\-./#]*$/;

/** Playgrounds are the administrators' to change; checked as the original's model validation does. */
export function decidePlayground(state: RealmState, command: PlaygroundCommand): PlaygroundChange[] {
  requireAdmin(state, command.caller);
  const store = state.playgrounds;
  switch (command.type) {
    case 'playground.add': {
      const { name, pygmentsLanguage, urlTemplate } = command;
      if (store.list.length >= MAX_PLAYGROUNDS) throw badRequest(`This organization already has ${MAX_PLAYGROUNDS} playgrounds, the most it may have`);
      if (!name) throw badRequest('This field cannot be blank.');
      for (const text of [name, urlTemplate]) {
        if (text.length > MAX_PLAYGROUND_TEXT_LENGTH) throw badRequest(`Ensure this value has at most ${MAX_PLAYGROUND_TEXT_LENGTH} characters (it has ${text.length}).`);
      }
      if (!pygmentsLanguage) throw badRequest('This field cannot be blank.');
      if (pygmentsLanguage.length > MAX_PYGMENTS_LANGUAGE_LENGTH) {
        throw badRequest(`Ensure this value has at most ${MAX_PYGMENTS_LANGUAGE_LENGTH} characters (it has ${pygmentsLanguage.length}).`);
      }
      if (!PYGMENTS_LANGUAGE.test(pygmentsLanguage)) throw badRequest('Invalid characters in pygments language');
      const template = parseUriTemplate(urlTemplate);
      if (!urlTemplate || !template) throw badRequest('Invalid URL template.');
      if (template.names.size !== 1 || !template.names.has('code')) throw badRequest('"code" should be the only variable present in the URL template');
      if (store.list.some((playground) => playground.name === name && playground.pygmentsLanguage === pygmentsLanguage)) {
        throw badRequest('Realm playground with this Realm, Pygments language and Name already exists.');
      }
      return [{ type: 'playground.added', playground: { id: store.nextId, name, pygmentsLanguage, urlTemplate } }];
    }
    case 'playground.remove':
      if (!store.list.some((playground) => playground.id === command.id)) throw badRequest('Invalid playground');
      return [{ type: 'playground.removed', id: command.id }];
  }
}
