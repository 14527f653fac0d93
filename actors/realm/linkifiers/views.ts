import type { LinkifierStore } from './state.ts';

/** The API's list: `{pattern, url_template, id}` in processing order. */
export const linkifiersView = (store: LinkifierStore) =>
  store.list.map((linkifier) => ({ pattern: linkifier.pattern, url_template: linkifier.urlTemplate, id: linkifier.id }));
