import { ChatError, ErrorCode } from '../../actors/errors.ts';
import { findUserByEmail } from '../../actors/realm/state.ts';
import { requireActive } from '../http/auth.ts';
import { p } from '../http/params.ts';
import { route } from './route.ts';
import type { WireResponse } from '../../actors/wire/responses.ts';

/**
 * The original's one-click development login for clients: anyone may take any user's key, so it answers only
 * on a server whose operator turned on CHAT_DEV_AUTH, never by default.
 */
export const devAuthRoutes = [
  route({
    method: 'POST',
    path: '/dev_fetch_api_key',
    auth: 'public',
    params: { username: p.string() },
    handle({ services, realm }, { username }) {
      if (!services.config.devAuthEnabled) throw new ChatError(ErrorCode.BAD_REQUEST, 'Endpoint not available in production.');
      const user = findUserByEmail(realm, username);
      if (!user) throw new ChatError(ErrorCode.AUTHENTICATION_FAILED, 'This user is not registered.', 401);
      requireActive(realm, user);
      return { api_key: user.apiKey, email: user.email, user_id: user.userId } satisfies WireResponse<'/dev_fetch_api_key', 'post'>;
    },
  }),
];
