import { statusView } from '../../user/views.ts';
import type { WireRegisterKeys } from '../../wire/events.ts';
import type { Builder } from '../builder.ts';

/** fetch type `user_status`: every active user's status that says something, by user id (a spectator: none). */
export const userStatusState: Builder = ({ realm, spectator, personalOf }) => {
  const statuses: Record<string, ReturnType<typeof statusView>> = {};
  if (spectator || !personalOf) return { user_status: statuses } satisfies WireRegisterKeys<'user_status'>;
  for (const user of realm.users.values()) {
    if (!user.isActive) continue;
    const personal = personalOf(user.userId);
    if (!personal) continue;
    const view = statusView(personal);
    if (Object.keys(view).length > 0) statuses[user.userId] = view;
  }
  return { user_status: statuses } satisfies WireRegisterKeys<'user_status'>;
};
