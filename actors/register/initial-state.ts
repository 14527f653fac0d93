import { SerializedValue, type Builder, type InitialStateOptions, type RegistrationView } from './builder.ts';
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
import { realmState, realmStateInputs } from './builders/realm.ts';
import { savedSnippetsState } from './builders/saved-snippets.ts';
import { remindersState, scheduledMessagesState } from './builders/scheduled-messages.ts';
import { settingsDefaultsState } from './builders/settings-defaults.ts';
import { userGroupsState } from './builders/user-groups.ts';
import { userSettingsState } from './builders/user-settings.ts';
import { mutedTopicsState, userTopicsState } from './builders/user-topics.ts';
import { channelFoldersState } from './builders/channel-folders.ts';
import { navigationViewsState } from './builders/navigation-views.ts';
import { defaultStreamGroupsState } from './builders/default-channel-groups.ts';
import { realmDomainsState } from './builders/realm-domains.ts';
import { legacyDisplaySettingsState, legacyNotificationSettingsState } from './builders/legacy-settings.ts';
import {
  embeddedBotsState,
  gifState,
  incomingWebhookBotsState,
  onboardingStepsState,
  pushDevicesState,
  realmBillingState,
  stopWordsState,
  videoCallsState,
} from './builders/server-features.ts';
import { userStatusState } from './builders/user-status.ts';
import { settingValue } from '../user/settings.ts';
import { sharedSection, type SerializedSection } from './shared-section.ts';

export type { InitialStateOptions, RegistrationView };

/** The fetch types whose initial state this server builds, each from its own area's builder. */
const builders: Record<string, Builder> = {
  subscription: subscriptionState,
  stream: streamState,
  default_streams: defaultStreamsState,
  realm: realmState,
  realm_user: realmUserState,
  saved_snippets: savedSnippetsState,
  realm_user_groups: userGroupsState,
  drafts: draftsState,
  scheduled_messages: scheduledMessagesState,
  user_settings: userSettingsState,
  alert_words: alertWordsState,
  muted_users: mutedUsersState,
  user_topic: userTopicsState,
  muted_topics: mutedTopicsState,
  user_status: userStatusState,
  update_display_settings: legacyDisplaySettingsState,
  update_global_notifications: legacyNotificationSettingsState,
  giphy: gifState,
  video_calls: videoCallsState,
  realm_billing: realmBillingState,
  stop_words: stopWordsState,
  realm_embedded_bots: embeddedBotsState,
  realm_incoming_webhook_bots: incomingWebhookBotsState,
  push_device: pushDevicesState,
  onboarding_steps: onboardingStepsState,
  reminders: remindersState,
  realm_domains: realmDomainsState,
  realm_playgrounds: realmPlaygroundsState,
  navigation_views: navigationViewsState,
  channel_folders: channelFoldersState,
  default_stream_groups: defaultStreamGroupsState,
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
};

export const SUPPORTED_FETCH_TYPES = Object.keys(builders);

/**
 * Sections the same for every registration of a realm until its next change (a few hundred keys of
 * settings and limits): `initialStateJson` serializes them once per change and splices the text.
 */
const sharedSections: Record<string, (view: RegistrationView, options: InitialStateOptions) => SerializedSection> = {
  realm: sharedSection(realmState, realmStateInputs),
};

/**
 * The registration state for the requested fetch types, from one consistent view of the realm: JSON fields
 * (`"a":1,"b":2`, no braces) in parts, to be written one after another as they are. A value given
 * serialized (a shared list) and a shared section are parts of their own, so that the answer is written
 * from the texts as they are kept: at 10,000 users a joined answer of 3 MB was flattened and encoded again
 * for each registration (2026-11-29).
 */
export function initialStateFields(view: RegistrationView, options: InitialStateOptions): string[] {
  // In every answer, whatever was asked for: whether typing notifications reach this client at all.
  const state: Record<string, unknown> = { receives_typing_notifications: settingValue(view.personal.settings, 'receives_typing_notifications') };
  const shared: SerializedSection[] = [];
  for (const [type, build] of Object.entries(builders)) {
    if (options.fetchTypes !== null && !options.fetchTypes.includes(type)) continue;
    const section = sharedSections[type];
    if (section) shared.push(section(view, options));
    else Object.assign(state, build(view, options));
  }
  // A key is sent once: a shared section's value stands (no builder sets another's key today).
  for (const section of shared) for (const key of Object.keys(state)) if (section.keys.has(key)) delete state[key];
  const serialized: string[] = [];
  for (const [key, value] of Object.entries(state)) {
    if (!(value instanceof SerializedValue)) continue;
    serialized.push(`,${JSON.stringify(key)}:`, ...value.parts);
    delete state[key];
  }
  // `state` always holds receives_typing_notifications, so its fields are never empty.
  const parts = [JSON.stringify(state).slice(1, -1), ...serialized];
  for (const section of shared) if (section.json) parts.push(',', section.json);
  return parts;
}
