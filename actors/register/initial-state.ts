import type { Builder, InitialStateOptions, RegistrationView } from './builder.ts';
import { alertWordsState } from './builders/alert-words.ts';
import { realmBotsState } from './builders/bots.ts';
import { customProfileFieldsState } from './builders/profile-fields.ts';
import { draftsState } from './builders/drafts.ts';
import { realmEmojiState } from './builders/emoji.ts';
import { realmFiltersState, realmLinkifiersState } from './builders/linkifiers.ts';
import { maxMessageIdState, recentConversationsState, starredMessagesState, unreadMessagesState } from './builders/messages.ts';
import { mutedUsersState } from './builders/muted-users.ts';
import { realmPlaygroundsState } from './builders/playgrounds.ts';
import { presenceState } from './builders/presence.ts';
import { defaultStreamsState, streamState, subscriptionState } from './builders/channels.ts';
import { realmUserState } from './builders/realm-user.ts';
import { realmState } from './builders/realm.ts';
import { savedSnippetsState } from './builders/saved-snippets.ts';
import { scheduledMessagesState } from './builders/scheduled-messages.ts';
import { settingsDefaultsState } from './builders/settings-defaults.ts';
import { userGroupsState } from './builders/user-groups.ts';
import { userSettingsState } from './builders/user-settings.ts';
import { userTopicsState } from './builders/user-topics.ts';

export type { InitialStateOptions, RegistrationView };

/** The fetch types whose initial state this server builds, each from its own area's builder. */
const builders: Record<string, Builder> = {
  subscription: subscriptionState,
  stream: streamState,
  default_streams: defaultStreamsState,
  realm: realmState,
  realm_user: realmUserState,
  saved_snippets: savedSnippetsState,
  user_groups: userGroupsState,
  drafts: draftsState,
  scheduled_messages: scheduledMessagesState,
  user_settings: userSettingsState,
  alert_words: alertWordsState,
  muted_users: mutedUsersState,
  user_topic: userTopicsState,
  realm_user_settings_defaults: settingsDefaultsState,
  message: maxMessageIdState,
  update_message_flags: unreadMessagesState,
  starred_messages: starredMessagesState,
  recent_private_conversations: recentConversationsState,
  presence: presenceState,
  custom_profile_fields: customProfileFieldsState,
  realm_bot: realmBotsState,
  realm_emoji: realmEmojiState,
  realm_linkifiers: realmLinkifiersState,
  realm_filters: realmFiltersState,
  realm_playgrounds: realmPlaygroundsState,
};

export const SUPPORTED_FETCH_TYPES = Object.keys(builders);

/** The registration state for the requested fetch types, from one consistent view of the realm. */
export function initialState(view: RegistrationView, options: InitialStateOptions): Record<string, unknown> {
  const state: Record<string, unknown> = {};
  for (const [type, build] of Object.entries(builders)) {
    if (options.fetchTypes === null || options.fetchTypes.includes(type)) Object.assign(state, build(view, options));
  }
  return state;
}
