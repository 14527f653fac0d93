import { notAdmin } from '../../actors/errors.ts';
import { DEFAULTABLE_SETTINGS } from '../../actors/realm/settings-defaults/state.ts';
import { isAdmin } from '../../actors/realm/state.ts';
import { SETTING_BY_NAME } from '../../actors/user/settings.ts';
import type { Param } from '../http/params.ts';
import { route } from './route.ts';
import { paramFor } from './settings.ts';
import type { WireResponse } from '../../actors/wire/responses.ts';

const params: Record<string, Param<unknown, true>> = Object.fromEntries(DEFAULTABLE_SETTINGS.map((name) => [name, paramFor(SETTING_BY_NAME.get(name)!)]));

export const settingsDefaultsRoutes = [
  // Settings this endpoint does not take (time zone, language, ...) come back in ignored_parameters_unsupported.
  route({
    method: 'PATCH',
    path: '/realm/user_settings_defaults',
    auth: 'user',
    authorize(user) {
      if (!isAdmin(user)) throw notAdmin();
    },
    params,
    async handle({ services, realm, user }, values) {
      const settings = Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined));
      await services.runtime.execute(realm.realmId, { type: 'settings_defaults.update', caller: { kind: 'user', userId: user.userId }, settings });
      return {} satisfies WireResponse<'/realm/user_settings_defaults', 'patch'>;
    },
  }),
];
