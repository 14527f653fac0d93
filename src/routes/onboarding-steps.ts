import { badRequest } from '../../actors/errors.ts';
import { p } from '../http/params.ts';
import { route } from './route.ts';

/** A person's client tells that it showed a one-time notice, so that no client shows it again. */
export const onboardingStepRoutes = [
  route({
    method: 'POST',
    path: '/users/me/onboarding_steps',
    auth: 'user',
    params: { onboarding_step: p.string() },
    async handle({ services, realm, user }, params) {
      if (user.isBot) throw badRequest('This endpoint does not accept bot requests.');
      await services.runtime.executeUser(realm.realmId, user.userId, { type: 'onboarding_step.mark_seen', name: params.onboarding_step });
      return {};
    },
  }),
];
