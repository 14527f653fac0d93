import { realmIconUrl } from '../../realm/avatars/urls.ts';
import { botDomainOf } from '../../realm/bots/state.ts';
import { GIF_RATINGS, VIDEO_CHAT_PROVIDERS } from '../../realm/settings/state.ts';
import { realmSettingsView } from '../../realm/settings/views.ts';
import type { WireRegister, WireRegisterKeys } from '../../wire/events.ts';
import type { Builder } from '../builder.ts';
import type { SectionInputs } from '../shared-section.ts';
import { EMPTY_TOPIC_DISPLAY_NAME, LIMITS, LONGPOLL_TIMEOUT_SECONDS, SERVER_LIMITS } from '../realm-limits.ts';
import { SUPPORTED_PERMISSION_SETTINGS } from './permission-settings.ts';

/**
 * The profile links administrators may offer as custom profile fields (the original's defaults); `%(username)s`
 * is the user's name on that site.
 */
const DEFAULT_EXTERNAL_ACCOUNTS = {
  github: { name: 'GitHub', text: 'GitHub', hint: 'Enter your GitHub username', url_pattern: 'https://github.com/%(username)s' },
  twitter: { name: 'Twitter', text: 'Twitter', hint: 'Enter your Twitter username', url_pattern: 'https://twitter.com/%(username)s' },
};

/** The realm has no uploaded icon or logo: its generated icon (source G) also stands for the logo (source D, the default). */
const ICON_SOURCE = 'G';
const LOGO_SOURCE = 'D';

/**
 * What the `realm` section reads besides the realm's state: it is built once per realm change for each
 * combination of these (initial-state.ts), so a key that reads another option lists that option here.
 */
export const realmStateInputs: SectionInputs = ({ spectator }, options) => [
  spectator === true,
  options.realmUrl,
  options.generation,
  options.webPublicStreamsEnabled,
  options.jitsiServerUrl,
  options.realmUploadQuotaBytes,
  options.passwordLimits.minLength,
  options.passwordLimits.maxLength,
  options.passwordLimits.minGuesses,
];

/** fetch type `realm`: the organization's settings and the server's limits. */
export const realmState: Builder = ({ realm, spectator }, options) => {
  const { realmUrl, generation, passwordLimits, webPublicStreamsEnabled, jitsiServerUrl, realmUploadQuotaBytes } = options;
  const settings = realmSettingsView(realm);
  const icon = realmIconUrl(realm);
  return {
    ...LIMITS,
    ...SERVER_LIMITS,
    realm_name: realm.name,
    realm_description: realm.description,
    realm_url: realmUrl,
    realm_uri: realmUrl,
    realm_date_created: realm.dateCreated,
    realm_empty_topic_display_name: EMPTY_TOPIC_DISPLAY_NAME,
    // The settings of PATCH /realm and the group-setting permissions, as the realm has them (a spread's keys are
    // not checked by the `satisfies` below, so they are checked here).
    ...(settings satisfies WireRegisterKeys<keyof typeof settings>),
    // This server sends no digest emails, so no realm has them on (as the original without SEND_DIGEST_EMAILS).
    settings_send_digest_emails: false,
    realm_digest_emails_enabled: false,
    // A spectator can edit nothing and is shown no presence, as in the original.
    ...(spectator && { realm_allow_message_editing: false }),
    realm_presence_disabled: spectator === true,
    realm_email_auth_enabled: true,
    realm_password_auth_enabled: true,
    realm_push_notifications_enabled: false,
    realm_push_notifications_enabled_end_timestamp: null,
    realm_authentication_methods: { Email: { enabled: true, available: true } },
    realm_icon_source: ICON_SOURCE,
    realm_icon_url: icon,
    realm_logo_source: LOGO_SOURCE,
    realm_logo_url: icon,
    realm_night_logo_source: LOGO_SOURCE,
    realm_night_logo_url: icon,
    realm_bot_domain: botDomainOf(realmUrl),
    realm_available_video_chat_providers: VIDEO_CHAT_PROVIDERS,
    realm_is_zephyr_mirror_realm: false,
    // For display only: the original's clients do not check it (the server does).
    realm_upload_quota_mib: realmUploadQuotaBytes === null ? null : Math.floor(realmUploadQuotaBytes / (1024 * 1024)),
    // Self-hosted, without a plan's limits.
    realm_plan_type: 1,
    zulip_plan_is_not_limited: true,
    upgrade_text_for_wide_organization_logo: '',
    realm_default_external_accounts: DEFAULT_EXTERNAL_ACCOUNTS,
    jitsi_server_url: settings.realm_jitsi_server_url ?? jitsiServerUrl,
    server_jitsi_server_url: jitsiServerUrl,
    giphy_rating_options: GIF_RATINGS,
    server_inline_image_preview: true,
    server_inline_url_embed_preview: false,
    server_thumbnail_formats: [],
    server_emoji_data_url: `${realmUrl}/emoji-data.json`,
    server_can_summarize_topics: false,
    server_supported_permission_settings: SUPPORTED_PERMISSION_SETTINGS,
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
  } satisfies Partial<WireRegister>;
};
