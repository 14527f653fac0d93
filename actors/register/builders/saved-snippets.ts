import { snippetView } from '../../user/views.ts';
import type { WireRegisterKeys } from '../../wire/events.ts';
import type { Builder } from '../builder.ts';

/** fetch type `saved_snippets` */
export const savedSnippetsState: Builder = ({ personal }) => ({ saved_snippets: [...personal.snippets.values()].map(snippetView) }) satisfies WireRegisterKeys<'saved_snippets'>;
