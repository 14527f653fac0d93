import type { PlaygroundStore } from './state.ts';

/** The API's `realm_playgrounds`: `{id, name, pygments_language, url_template}` in the order they were added. */
export const playgroundsView = (store: PlaygroundStore) =>
  store.list.map((playground) => ({
    id: playground.id,
    name: playground.name,
    pygments_language: playground.pygmentsLanguage,
    url_template: playground.urlTemplate,
  }));
