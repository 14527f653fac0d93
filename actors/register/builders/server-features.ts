import { onboardingStepsView } from '../../user/onboarding.ts';
import { pushDevicesView } from '../../user/push-e2ee.ts';
import type { WireRegisterKeys } from '../../wire/events.ts';
import type { Builder } from '../builder.ts';

/** fetch type `giphy`: the GIF service key of the server's configuration (such keys are public by design). */
export const gifState: Builder = (_view, { gifApiKey }) => ({ gif_api_key: gifApiKey }) satisfies WireRegisterKeys<'gif_api_key'>;

/** fetch type `video_calls`: whether the caller connected the video call service's account (Zoom's user OAuth). */
export const videoCallsState: Builder = ({ personal, spectator }) => ({ has_video_token: !spectator && personal.videoToken !== null }) satisfies WireRegisterKeys<'has_video_token'>;

/** fetch type `realm_billing`: a self-hosted server bills nobody, so no sponsorship request is pending. */
export const realmBillingState: Builder = () => ({ realm_billing: { has_pending_sponsorship_request: false } }) satisfies WireRegisterKeys<'realm_billing'>;

/** fetch type `stop_words`: the words search ignores; this server's search matches every word. */
export const stopWordsState: Builder = () => ({ stop_words: [] }) satisfies WireRegisterKeys<'stop_words'>;

/** fetch type `realm_embedded_bots`: the bot services the server runs itself; it runs none. */
export const embeddedBotsState: Builder = () => ({ realm_embedded_bots: [] }) satisfies WireRegisterKeys<'realm_embedded_bots'>;

/** fetch type `realm_incoming_webhook_bots`: the integrations incoming-webhook bots can take; the server has none built in. */
export const incomingWebhookBotsState: Builder = () => ({ realm_incoming_webhook_bots: [] }) satisfies WireRegisterKeys<'realm_incoming_webhook_bots'>;

/** fetch type `push_device`: the caller's devices registered for end-to-end encrypted push, with their status. */
export const pushDevicesState: Builder = ({ personal, spectator }) => ({ push_devices: spectator ? {} : pushDevicesView(personal) }) satisfies WireRegisterKeys<'push_devices'>;

/** fetch type `onboarding_steps`: the one-time notices the caller has not seen yet; the server has no tour video. */
export const onboardingStepsState: Builder = ({ personal, spectator }) => ({
  onboarding_steps: spectator ? [] : onboardingStepsView(personal),
  navigation_tour_video_url: null,
}) satisfies WireRegisterKeys<'onboarding_steps' | 'navigation_tour_video_url'>;
