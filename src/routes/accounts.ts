import { confirmationKeyOwner, pendingChangeFor, unknownConfirmation } from '../../actors/user/email-change.ts';
import { requireActive } from '../http/auth.ts';
import { p } from '../http/params.ts';
import { route } from './route.ts';

/** Pages outside the API that people open from a link in a mail; the link's key is the credential. */
export const accountRoutes = [
  route({
    method: 'GET',
    path: '/accounts/confirm_new_email/{confirmation_key}',
    root: true,
    auth: 'public',
    params: { confirmation_key: p.string() },
    async handle({ services, realm }, { confirmation_key: key }) {
      const { runtime } = services;
      const userId = confirmationKeyOwner(key);
      const user = userId === null ? undefined : realm.users.get(userId);
      const personal = user && runtime.userActor(realm.realmId, user.userId)?.getSnapshot().context.state;
      const pending = personal ? pendingChangeFor(personal, key, runtime.clock.now()) : null;
      if (!user || !pending) throw unknownConfirmation();
      requireActive(realm, user);
      const caller = { kind: 'user' as const, userId: user.userId };
      // The address first, then the key is used up: if the second step is lost to a crash, following the link
      // again finds the address already changed and only uses up the key.
      await runtime.execute(realm.realmId, { type: 'user.change_email', caller, userId: user.userId, email: pending.newEmail });
      await runtime.executeUser(realm.realmId, user.userId, { type: 'email.confirm_change', token: key });
      return { msg: `The email address of your account is now ${pending.newEmail}.`, new_email: pending.newEmail };
    },
  }),
];
