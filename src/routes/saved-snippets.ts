import { z } from 'zod';
import { snippetView } from '../../actors/user/views.ts';
import { p } from '../http/params.ts';
import { changeOf } from './change-of.ts';
import { route } from './route.ts';
import type { WireResponse } from '../../actors/wire/responses.ts';

const snippetId = p.int(z.number().int());

export const savedSnippetRoutes = [
  route({
    method: 'GET',
    path: '/saved_snippets',
    auth: 'user',
    params: {},
    handle({ services, realm, user }) {
      const { snippets } = services.runtime.userState(realm.realmId, user.userId);
      return { saved_snippets: [...snippets.values()].map(snippetView) } satisfies WireResponse<'/saved_snippets', 'get'>;
    },
  }),

  route({
    method: 'POST',
    path: '/saved_snippets',
    auth: 'user',
    params: { title: p.string(), content: p.string() },
    async handle({ services, realm, user }, { title, content }) {
      const changes = await services.runtime.executeUser(realm.realmId, user.userId, { type: 'snippet.create', title, content });
      return { saved_snippet_id: changeOf(changes, 'snippet.created').snippet.id } satisfies WireResponse<'/saved_snippets', 'post'>;
    },
  }),

  route({
    method: 'PATCH',
    path: '/saved_snippets/{saved_snippet_id}',
    auth: 'user',
    params: { saved_snippet_id: snippetId, title: p.string().optional(), content: p.string().optional() },
    async handle({ services, realm, user }, params) {
      await services.runtime.executeUser(realm.realmId, user.userId, {
        type: 'snippet.edit', id: params.saved_snippet_id, title: params.title, content: params.content,
      });
      return {} satisfies WireResponse<'/saved_snippets/{saved_snippet_id}', 'patch'>;
    },
  }),

  route({
    method: 'DELETE',
    path: '/saved_snippets/{saved_snippet_id}',
    auth: 'user',
    params: { saved_snippet_id: snippetId },
    async handle({ services, realm, user }, params) {
      await services.runtime.executeUser(realm.realmId, user.userId, { type: 'snippet.delete', id: params.saved_snippet_id });
      return {} satisfies WireResponse<'/saved_snippets/{saved_snippet_id}', 'delete'>;
    },
  }),
];
