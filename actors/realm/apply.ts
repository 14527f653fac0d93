import { applyAttachmentChange, relinkMessage } from './attachments/apply.ts';
import { applyAvatarChange } from './avatars/apply.ts';
import { applyBotChange } from './bots/apply.ts';
import type { RealmChange } from './changes.ts';
import { applyChannelChange } from './channels/apply.ts';
import { applyEmojiChange } from './emoji/apply.ts';
import { applyGroupChange, createSystemGroups, setRoleMembership } from './groups/apply.ts';
import { applyLinkifierChange } from './linkifiers/apply.ts';
import { applyPlaygroundChange } from './playgrounds/apply.ts';
import { applyChannelFolderChange } from './channel-folders/apply.ts';
import { applyRealmDomainChange } from './domains/apply.ts';
import { applyDefaultChannelGroupChange } from './default-channel-groups/apply.ts';
import { applyInvitationChange } from './invitations/apply.ts';
import { applyMessageChange } from './messages/apply.ts';
import { applyProfileFieldChange } from './profile-fields/apply.ts';
import { applyRealmSettingsChange } from './settings/apply.ts';
import { applySettingsDefaultsChange } from './settings-defaults/apply.ts';
import type { RealmState } from './state.ts';
import { addSubmessage } from './submessages/state.ts';
import { applySubmessageChange, dropSubmessages } from './submessages/apply.ts';
import { applyRealmExportChange } from './exports/apply.ts';
import { forgetChangedViews } from './messages/view-cache.ts';
import { forgetChangedChannelTexts } from './channels/view-json.ts';
import { countChange } from './version.ts';

/** Applies one fact to the realm state, in place. The same code runs live and during log replay. */
export function applyRealmChange(state: RealmState, change: RealmChange): void {
  countChange(state, change);
  forgetChangedViews(state, change);
  forgetChangedChannelTexts(state, change);
  switch (change.type) {
    case 'realm.created':
      state.stringId = change.stringId;
      state.name = change.name;
      state.dateCreated = Math.floor(change.at / 1000);
      if (state.groups.size === 0) createSystemGroups(state);
      return;
    case 'realm.deactivated':
      state.deactivated = true;
      return;
    case 'user.created':
      state.users.set(change.user.userId, change.user.bot ? { ...change.user, bot: structuredClone(change.user.bot) } : { ...change.user });
      state.userIdByEmail.set(change.user.email.toLowerCase(), change.user.userId);
      state.nextUserId = Math.max(state.nextUserId, change.user.userId + 1);
      setRoleMembership(state, change.user.userId, null, change.user.role);
      return;
    case 'user.deactivated':
      withUser(state, change.userId, (user) => (user.isActive = false));
      return;
    case 'user.reactivated':
      withUser(state, change.userId, (user) => (user.isActive = true));
      return;
    case 'user.updated':
      withUser(state, change.userId, (user) => {
        if (change.fullName !== undefined) user.fullName = change.fullName;
        if (change.timezone !== undefined) user.timezone = change.timezone;
        if (change.role !== undefined) {
          setRoleMembership(state, user.userId, user.role, change.role);
          user.role = change.role;
        }
      });
      return;
    case 'user.api_key_changed':
      withUser(state, change.userId, (user) => (user.apiKey = change.apiKey));
      return;
    case 'user.password_changed':
      withUser(state, change.userId, (user) => (user.passwordHash = change.passwordHash));
      return;
    case 'user.email_changed':
      withUser(state, change.userId, (user) => {
        // The old address stops naming the user (for login and API credentials) as the new one starts.
        state.userIdByEmail.delete(user.email.toLowerCase());
        state.userIdByEmail.set(change.email.toLowerCase(), user.userId);
        user.email = change.email;
      });
      return;
    case 'user.email_visibility_changed':
      withUser(state, change.userId, (user) => (user.emailAddressVisibility = change.visibility));
      return;
    case 'group.created':
    case 'group.updated':
    case 'group.members_changed':
    case 'group.subgroups_changed':
      applyGroupChange(state, change);
      return;
    case 'channel.created':
    case 'channel.updated':
    case 'subscriptions.added':
    case 'subscriptions.removed':
    case 'subscription.properties_set':
      applyChannelChange(state, change);
      return;
    case 'settings_default.changed':
      applySettingsDefaultsChange(state, change);
      return;
    case 'realm.property_changed':
    case 'realm.permission_changed':
      applyRealmSettingsChange(state, change);
      return;
    case 'profile_field.created':
    case 'profile_field.updated':
    case 'profile_field.deleted':
    case 'profile_fields.reordered':
    case 'profile_data.changed':
      applyProfileFieldChange(state, change);
      return;
    case 'bot.updated':
      applyBotChange(state, change);
      return;
    case 'notification_bot.created':
      state.notificationBot = { ...change.bot };
      state.nextUserId = Math.max(state.nextUserId, change.bot.userId + 1);
      return;
    case 'message.sent':
      applyMessageChange(state, change);
      relinkMessage(state, change.message.id, [], change.message.attachmentIds ?? []);
      if (change.widget) addSubmessage(state.submessages, change.widget);
      return;
    case 'message.edited':
      // The links change before the edit applies, while the message still holds its old list.
      if (change.content) relinkMessage(state, change.targetId, state.messages.byId.get(change.targetId)?.attachmentIds ?? [], change.content.attachmentIds ?? []);
      applyMessageChange(state, change);
      return;
    case 'attachment.uploaded':
    case 'attachment.deleted':
      applyAttachmentChange(state, change);
      return;
    case 'emoji.added':
    case 'emoji.deactivated':
      applyEmojiChange(state, change);
      return;
    case 'linkifier.added':
    case 'linkifier.updated':
    case 'linkifier.removed':
    case 'linkifiers.reordered':
      applyLinkifierChange(state, change);
      return;
    case 'playground.added':
    case 'playground.removed':
      applyPlaygroundChange(state, change);
      return;
    case 'channel_folder.created':
    case 'channel_folder.updated':
    case 'channel_folders.reordered':
      applyChannelFolderChange(state, change);
      return;
    case 'realm_domain.added':
    case 'realm_domain.changed':
    case 'realm_domain.removed':
      applyRealmDomainChange(state, change);
      return;
    case 'default_channel_group.created':
    case 'default_channel_group.updated':
    case 'default_channel_group.deleted':
      applyDefaultChannelGroupChange(state, change);
      return;
    case 'user.avatar_changed':
      applyAvatarChange(state, change);
      return;
    case 'invitations.created':
    case 'invitation.revoked':
    case 'invitation.resent':
    case 'invitation.used':
    case 'invitations.forgotten':
      applyInvitationChange(state, change);
      return;
    case 'submessage.added':
      applySubmessageChange(state, change);
      return;
    case 'realm_export.requested':
    case 'realm_export.completed':
    case 'realm_export.failed':
      applyRealmExportChange(state, change);
      return;
    case 'messages.deleted':
      applyMessageChange(state, change);
      dropSubmessages(state, change.groups.flatMap((group) => group.messageIds));
      return;
    case 'reaction.added':
    case 'reaction.removed':
    case 'message.flags_changed':
      applyMessageChange(state, change);
      return;
  }
}

function withUser(state: RealmState, userId: number, mutate: (user: NonNullable<ReturnType<RealmState['users']['get']>>) => void) {
  const user = state.users.get(userId);
  if (user) mutate(user);
}
