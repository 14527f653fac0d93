import { ChatError, ErrorCode } from '../../actors/errors.ts';
import { renderMarkdown } from '../../actors/markdown.ts';
import { realmIconUrl } from '../../actors/realm/avatars/urls.ts';
import { findUserByEmail } from '../../actors/realm/state.ts';
import { hasPublicAccess } from '../../actors/register/spectator.ts';
import { requireActive } from '../http/auth.ts';
import { p } from '../http/params.ts';
import { checkPassword } from '../password-check.ts';
import { FEATURE_LEVEL, MERGE_BASE, VERSION } from '../version.ts';
import { route } from './route.ts';
import type { WireResponse } from '../../actors/wire/responses.ts';

const loginFailed = () =>
  new ChatError(ErrorCode.AUTHENTICATION_FAILED, 'Your username or password is incorrect', 401);

export const authRoutes = [
  route({
    method: 'POST',
    path: '/fetch_api_key',
    auth: 'public',
    params: { username: p.string(), password: p.string() },
    async handle({ services, realm, request }, { username, password }) {
      const user = findUserByEmail(realm, username);
      const account = { realmId: realm.realmId, username, stored: user?.passwordHash ?? null };
      if (!(await checkPassword(services, request, 'anonymous', account, password)) || !user) throw loginFailed();
      requireActive(realm, user);
      return { api_key: user.apiKey, email: user.email, user_id: user.userId } satisfies WireResponse<'/fetch_api_key', 'post'>;
    },
  }),

  route({
    method: 'POST',
    path: '/users/me/api_key/regenerate',
    auth: 'user',
    params: {},
    async handle({ services, realm, user }) {
      const [change] = await services.runtime.execute(realm.realmId, {
        type: 'user.regenerate_api_key',
        caller: { kind: 'user', userId: user.userId },
        userId: user.userId,
      });
      return { api_key: change?.type === 'user.api_key_changed' ? change.apiKey : user.apiKey };
    },
  }),

  route({
    method: 'GET',
    path: '/server_settings',
    auth: 'public',
    params: {},
    handle({ services, realm }) {
      const url = services.realmUrl(realm);
      return {
        authentication_methods: {
          password: true, dev: false, email: true, ldap: false, remoteuser: false, github: false, azuread: false,
          gitlab: false, apple: false, google: false, saml: false, 'openid connect': false,
        },
        external_authentication_methods: [],
        svc_feature_level: FEATURE_LEVEL,
        svc_version: VERSION,
        svc_merge_base: MERGE_BASE,
        push_notifications_enabled: false,
        is_incompatible: false,
        email_auth_enabled: true,
        require_email_format_usernames: true,
        realm_url: url,
        realm_uri: url,
        realm_name: realm.name,
        realm_icon: realmIconUrl(realm),
        // Shown on login pages: rendered, unlike registration's raw `realm_description` (what the settings form edits).
        realm_description: renderMarkdown(realm.description),
        // Whether a client may register without an account and read the web-public channels.
        realm_web_public_access_enabled: hasPublicAccess(realm, services.config.webPublicStreamsEnabled),
      } satisfies WireResponse<'/server_settings', 'get'>;
    },
  }),
];
