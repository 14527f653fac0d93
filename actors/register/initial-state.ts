import { isAdmin, Role, type RealmState, type UserProfile } from '../realm/state.ts';
import { avatarUrl, personView } from '../realm/views.ts';
import type { UserState } from '../user/state.ts';
import { snippetView } from '../user/views.ts';
import { EMPTY_TOPIC_DISPLAY_NAME, LIMITS, LONGPOLL_TIMEOUT_SECONDS } from './realm-limits.ts';

export interface InitialStateOptions {
  /** null: every type this server supports */
  fetchTypes: readonly string[] | null;
  clientExtavatar: boolean;
  realmUrl: string;
  generation: number;
  passwordLimits: { minLength: number; maxLength: number; minGuesses: number };
}

/** The fetch types whose initial state this server builds. */
export const SUPPORTED_FETCH_TYPES = ['realm', 'realm_user', 'saved_snippets'] as const;

/** What the registration state is computed from: one consistent view of the realm and the user's actor. */
export interface RegistrationView {
  realm: RealmState;
  user: UserProfile;
  personal: UserState;
}

type Builder = (view: RegistrationView, options: InitialStateOptions) => Record<string, unknown>;

const builders: Record<(typeof SUPPORTED_FETCH_TYPES)[number], Builder> = {
  realm_user: ({ realm, user }, { clientExtavatar }) => {
    const active: unknown[] = [];
    const inactive: unknown[] = [];
    for (const other of realm.users.values()) {
      (other.isActive ? active : inactive).push(personView(other, clientExtavatar));
    }
    const admin = isAdmin(user);
    const member = user.role <= Role.member;
    return {
      realm_users: active,
      realm_non_active_users: inactive,
      cross_realm_bots: [],
      avatar_source: 'G',
      avatar_url: avatarUrl(user, false),
      avatar_url_medium: avatarUrl(user, false),
      can_create_streams: member,
      can_create_public_streams: member,
      can_create_private_streams: member,
      can_create_web_public_streams: user.role === Role.owner,
      can_subscribe_other_users: member,
      can_invite_others_to_realm: member,
      is_admin: admin,
      is_owner: user.role === Role.owner,
      is_moderator: user.role <= Role.moderator,
      is_guest: user.role === Role.guest,
      user_id: user.userId,
      email: user.email,
      delivery_email: user.email,
      full_name: user.fullName,
    };
  },
  realm: ({ realm }, { realmUrl, generation, passwordLimits }) => ({
    ...LIMITS,
    realm_name: realm.name,
    realm_description: realm.description,
    realm_url: realmUrl,
    realm_uri: realmUrl,
    realm_date_created: realm.dateCreated,
    realm_empty_topic_display_name: EMPTY_TOPIC_DISPLAY_NAME,
    realm_default_language: 'en',
    realm_allow_message_editing: true,
    realm_message_content_edit_limit_seconds: 600,
    realm_move_messages_within_stream_limit_seconds: 604_800,
    realm_move_messages_between_streams_limit_seconds: 604_800,
    realm_message_retention_days: -1,
    realm_topics_policy: 'allow_empty_topic',
    realm_mandatory_topics: false,
    realm_enable_spectator_access: false,
    realm_presence_disabled: false,
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
    server_web_public_streams_enabled: false,
    server_avatar_changes_disabled: false,
    server_name_changes_disabled: false,
    server_needs_upgrade: false,
    development_environment: false,
    password_min_length: passwordLimits.minLength,
    password_max_length: passwordLimits.maxLength,
    password_min_guesses: passwordLimits.minGuesses,
  }),
  saved_snippets: ({ personal }) => ({ saved_snippets: [...personal.snippets.values()].map(snippetView) }),
};

/** The registration state for the requested fetch types, from one consistent view of the realm. */
export function initialState(view: RegistrationView, options: InitialStateOptions): Record<string, unknown> {
  const state: Record<string, unknown> = {};
  for (const type of SUPPORTED_FETCH_TYPES) {
    if (options.fetchTypes === null || options.fetchTypes.includes(type)) Object.assign(state, builders[type](view, options));
  }
  return state;
}
