import { badRequest } from '../errors.ts';
import type { UserChange } from './changes.ts';
import type { UserState } from './state.ts';

/** The original's one-time notices (zerver/lib/onboarding_steps.py), which its web app shows once each. */
export const ONE_TIME_NOTICES = [
  'visibility_policy_banner', 'intro_inbox_view_modal', 'intro_recent_view_modal', 'first_stream_created_banner', 'jump_to_conversation_banner',
  'non_interleaved_view_messages_fading', 'interleaved_view_messages_fading', 'intro_resolve_topic', 'navigation_tour_video',
] as const;

/** This server has no tour video (`navigation_tour_video_url` is null): its notice counts as seen, as in the original. */
const SEEN_BY_EVERYONE: ReadonlySet<string> = new Set(['navigation_tour_video']);

/** The notices still to show the user, as registration's and the event's `onboarding_steps`. */
export const onboardingStepsView = (state: UserState) =>
  ONE_TIME_NOTICES.filter((name) => !SEEN_BY_EVERYONE.has(name) && !state.onboardingStepsSeen.includes(name)).map((name) => ({ type: 'one_time_notice', name }));

/** A notice the user has seen; marking one twice changes nothing. */
export function decideOnboardingStep(state: UserState, name: string): UserChange[] {
  if (!(ONE_TIME_NOTICES as readonly string[]).includes(name)) throw badRequest(`Unknown onboarding_step: ${name}`);
  return state.onboardingStepsSeen.includes(name) ? [] : [{ type: 'onboarding_step.seen', name }];
}
