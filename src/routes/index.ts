import { accountRoutes } from './accounts.ts';
import { alertWordRoutes } from './alert-words.ts';
import { avatarRoutes } from './avatars.ts';
import { authRoutes } from './auth.ts';
import { botRoutes } from './bots.ts';
import { channelFolderRoutes } from './channel-folders.ts';
import { channelRoutes } from './channels.ts';
import { defaultChannelGroupRoutes } from './default-channel-groups.ts';
import { devAuthRoutes } from './dev-auth.ts';
import { draftRoutes } from './drafts.ts';
import { emojiRoutes } from './emoji.ts';
import { eventRoutes } from './events.ts';
import { linkifierRoutes } from './linkifiers.ts';
import { inviteRoutes } from './invites.ts';
import { joinRoutes } from './join.ts';
import { messageEditRoutes } from './message-edits.ts';
import { submessageRoutes } from './submessages.ts';
import { messageFlagRoutes } from './message-flags.ts';
import { messageReportRoutes } from './message-reports.ts';
import { messageRoutes } from './messages.ts';
import { mutedUserRoutes } from './muted-users.ts';
import { navigationViewRoutes } from './navigation-views.ts';
import { onboardingStepRoutes } from './onboarding-steps.ts';
import { playgroundRoutes } from './playgrounds.ts';
import { presenceRoutes } from './presence.ts';
import { profileFieldRoutes } from './profile-fields.ts';
import { mobilePushRoutes } from './mobile-push.ts';
import { pushTokenRoutes } from './push-tokens.ts';
import { realmRoutes } from './realm.ts';
import { reminderRoutes } from './reminders.ts';
import { realmDomainRoutes } from './realm-domains.ts';
import { realmExportRoutes } from './realm-exports.ts';
import type { Route } from './route.ts';
import { subscriptionRoutes } from './subscriptions.ts';
import { savedSnippetRoutes } from './saved-snippets.ts';
import { scheduledMessageRoutes } from './scheduled-messages.ts';
import { settingsDefaultsRoutes } from './settings-defaults.ts';
import { settingsRoutes } from './settings.ts';
import { typingRoutes } from './typing.ts';
import { uploadRoutes } from './uploads.ts';
import { userGroupRoutes } from './user-groups.ts';
import { userStatusRoutes } from './user-status.ts';
import { userTopicRoutes } from './user-topics.ts';
import { userRoutes } from './users.ts';
import { videoCallRoutes } from './video-calls.ts';
import { zoomRoutes } from './video-calls-zoom.ts';

/** Every API area's route table. */
export const allRoutes: readonly Route[] = [...authRoutes, ...userRoutes, ...eventRoutes, ...savedSnippetRoutes, ...userGroupRoutes,
  ...settingsDefaultsRoutes, ...userTopicRoutes, ...accountRoutes,
  ...draftRoutes, ...scheduledMessageRoutes, ...settingsRoutes, ...pushTokenRoutes, ...mobilePushRoutes, ...alertWordRoutes, ...userStatusRoutes, ...mutedUserRoutes,
  ...channelRoutes, ...subscriptionRoutes, ...messageRoutes, ...messageEditRoutes, ...submessageRoutes, ...messageFlagRoutes,
  ...typingRoutes, ...presenceRoutes,
  ...realmRoutes, ...profileFieldRoutes, ...botRoutes, ...uploadRoutes, ...emojiRoutes, ...linkifierRoutes, ...avatarRoutes,
  ...inviteRoutes, ...joinRoutes, ...devAuthRoutes, ...messageReportRoutes, ...playgroundRoutes, ...channelFolderRoutes, ...navigationViewRoutes, ...realmExportRoutes, ...onboardingStepRoutes, ...realmDomainRoutes, ...defaultChannelGroupRoutes, ...reminderRoutes, ...videoCallRoutes, ...zoomRoutes];
