import { notAdmin } from '../../actors/errors.ts';
import { isAdmin } from '../../actors/realm/state.ts';
import { settingValue } from '../../actors/user/settings.ts';
import { route } from './route.ts';

/** Data exports of the organization, for its administrators. */
export const realmExportRoutes = [
  // Who lets administrators export their private data (the user setting `allow_private_data_export`).
  route({
    method: 'GET',
    path: '/export/realm/consents',
    auth: 'user',
    authorize(user) {
      if (!isAdmin(user)) throw notAdmin();
    },
    params: {},
    handle({ services, realm }) {
      const people = [...realm.users.values()].filter((user) => user.isActive && !user.isBot);
      return {
        export_consents: people.map((user) => ({
          user_id: user.userId,
          consented: settingValue(services.runtime.userState(realm.realmId, user.userId).settings, 'allow_private_data_export') === true,
        })),
      };
    },
  }),
];
