import { snippetView } from '../../user/views.ts';
import type { Builder } from '../builder.ts';

/** fetch type `saved_snippets` */
export const savedSnippetsState: Builder = ({ personal }) => ({ saved_snippets: [...personal.snippets.values()].map(snippetView) });
