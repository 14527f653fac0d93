import { realmSettingsView } from '../../realm/settings/views.ts';
import type { Builder } from '../builder.ts';
import { EMPTY_TOPIC_DISPLAY_NAME, LIMITS, LONGPOLL_TIMEOUT_SECONDS } from '../realm-limits.ts';

/** fetch type `realm`: the organization's settings and the server's limits. */
export const realmState: Builder = ({ realm, spectator }, { realmUrl, generation, passwordLimits, webPublicStreamsEnabled, realmUploadQuotaBytes }) => ({
  ...LIMITS,
  realm_name: realm.name,
  realm_description: realm.description,
  realm_url: realmUrl,
  realm_uri: realmUrl,
  realm_date_created: realm.dateCreated,
  realm_empty_topic_display_name: EMPTY_TOPIC_DISPLAY_NAME,
  // For display only: the original's clients do not check it (the server does).
  realm_upload_quota_mib: realmUploadQuotaBytes === null ? null : Math.floor(realmUploadQuotaBytes / (1024 * 1024)),
  // The settings of PATCH /realm and the group-setting permissions, as the realm has them.
  ...realmSettingsView(realm),
  // A spectator can edit nothing and is shown no presence, as in the original.
  ...(spectator && { realm_allow_message_editing: false }),
  realm_presence_disabled: spectator === true,
  realm_email_auth_enabled: true,
  realm_password_auth_enabled: true,
  realm_push_notifications_enabled: false,
  realm_authentication_methods: { Email: { enabled: true, available: true } },
  event_queue_longpoll_timeout_seconds: LONGPOLL_TIMEOUT_SECONDS,
  server_generation: generation,
  server_presence_ping_interval_seconds: 60,
  server_presence_offline_threshold_seconds: 140,
  server_typing_started_expiry_period_milliseconds: 15_000,
  server_typing_stopped_wait_period_milliseconds: 5_000,
  server_typing_started_wait_period_milliseconds: 10_000,
  server_web_public_streams_enabled: webPublicStreamsEnabled,
  server_avatar_changes_disabled: false,
  server_name_changes_disabled: false,
  server_needs_upgrade: false,
  development_environment: false,
  password_min_length: passwordLimits.minLength,
  password_max_length: passwordLimits.maxLength,
  password_min_guesses: passwordLimits.minGuesses,
});
