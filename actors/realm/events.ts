import type { WireEventOf } from '../wire/events.ts';
import type { ApiEvent, Delivery } from '../events.ts';
import { submessageEvents } from './submessages/events.ts';
import { realmExportEvents } from './exports/events.ts';
import { attachmentEvents, attachmentLinkEvents } from './attachments/events.ts';
import { avatarEvents } from './avatars/events.ts';
import { initials } from './avatars/urls.ts';
import { botAccountEvent, botEvents } from './bots/events.ts';
import type { RealmChange } from './changes.ts';
import { channelEvents } from './channels/events.ts';
import { emojiEvents } from './emoji/events.ts';
import { groupEvents } from './groups/events.ts';
import { linkifierEvents } from './linkifiers/events.ts';
import { playgroundEvents } from './playgrounds/events.ts';
import { channelFolderEvents } from './channel-folders/events.ts';
import { realmDomainEvents } from './domains/events.ts';
import { defaultChannelGroupsView } from './default-channel-groups/views.ts';
import { invitationEvents } from './invitations/events.ts';
import { messageEvents } from './messages/events.ts';
import { profileFieldEvents } from './profile-fields/events.ts';
import { realmSettingsEvents } from './settings/events.ts';
import { settingsDefaultsEvents } from './settings-defaults/events.ts';
import { humanAdministrators, Role, type RealmState } from './state.ts';
import { exportConsentDeliveries } from '../user/events.ts';
import { userAddedDeliveries } from './user-access.ts';
import { addressEvents } from './email-visibility-events.ts';
import { displayEmail } from './email-visibility.ts';

/** One event for every queue of the realm. */
const toRealm = (state: RealmState, event: ApiEvent): Delivery[] => [{ realmId: state.realmId, audience: { kind: 'realm' }, event }];

/** Each event for every queue of the realm. */
const eachToRealm = (state: RealmState, events: readonly ApiEvent[]): Delivery[] => events.flatMap((event) => toRealm(state, event));

/** The events a realm change announces, computed from the state after the change was applied. */
export function realmEvents(state: RealmState, change: RealmChange, now: number): Delivery[] {
  switch (change.type) {
    case 'user.created': {
      const user = state.users.get(change.user.userId);
      // Avatar URLs in events are always sent in full; clients that compute them locally ignore the field.
      if (!user) return [];
      // A bot's key and configuration go to those who administer it; everyone learns of the account.
      // Administrators learn a new person's export consent apart: it is off (never a default for new users).
      const consent = user.isBot ? [] : exportConsentDeliveries(state.realmId, humanAdministrators(state), user.userId, false);
      return [...userAddedDeliveries(state, user), ...botAccountEvent(state, user.userId, 'add'), ...consent];
    }
    // Since feature level 222 (de)activation is an update with is_active, not remove/add.
    case 'user.deactivated':
      return [
        ...toRealm(state, { type: 'realm_user', op: 'update', person: { user_id: change.userId, is_active: false } } satisfies WireEventOf<'realm_user', 'update'>),
        ...botAccountEvent(state, change.userId, 'update', { is_active: false }),
      ];
    case 'user.reactivated':
      return [
        ...toRealm(state, { type: 'realm_user', op: 'update', person: { user_id: change.userId, is_active: true } } satisfies WireEventOf<'realm_user', 'update'>),
        ...botAccountEvent(state, change.userId, 'update', { is_active: true }),
      ];
    case 'user.updated': {
      const out: Delivery[] = [];
      if (change.fullName !== undefined) {
        out.push(...toRealm(state, { type: 'realm_user', op: 'update', person: { user_id: change.userId, full_name: change.fullName } } satisfies WireEventOf<'realm_user', 'update'>));
        // A default avatar shows the name's initials: new initials are a new picture, at a new URL.
        const user = state.users.get(change.userId);
        if (user && !user.avatarPathId && initials(change.previousFullName ?? '') !== initials(change.fullName)) out.push(...avatarEvents(state, user));
      }
      if (change.role !== undefined) {
        out.push(...toRealm(state, { type: 'realm_user', op: 'update', person: { user_id: change.userId, role: change.role } } satisfies WireEventOf<'realm_user', 'update'>));
      }
      if (change.timezone !== undefined) {
        // With the API address, as the original sends it (the document marks it deprecated).
        const user = state.users.get(change.userId);
        const person = user && { user_id: change.userId, email: displayEmail(state, user), timezone: change.timezone };
        if (person) out.push(...toRealm(state, { type: 'realm_user', op: 'update', person } satisfies WireEventOf<'realm_user', 'update'>));
      }
      return out;
    }
    case 'user.email_changed':
    case 'user.email_visibility_changed':
      return addressEvents(state, change);
    case 'group.created':
    case 'group.updated':
    case 'group.members_changed':
    case 'group.subgroups_changed':
      return eachToRealm(state, groupEvents(state, change));
    case 'channel.created':
    case 'channel.updated':
    case 'subscriptions.added':
    case 'subscriptions.removed':
    case 'subscription.properties_set':
      return channelEvents(state, change, now);
    case 'settings_default.changed':
      return eachToRealm(state, settingsDefaultsEvents(change));
    case 'realm.property_changed':
    case 'realm.permission_changed':
      return eachToRealm(state, realmSettingsEvents(change));
    case 'profile_field.created':
    case 'profile_field.updated':
    case 'profile_field.deleted':
    case 'profile_fields.reordered':
    case 'profile_data.changed':
      return eachToRealm(state, profileFieldEvents(state, change));
    case 'bot.updated':
      return botEvents(state, change);
    // A bot's new key goes to those who administer it; a person's to nobody (the response carries it).
    case 'user.api_key_changed':
      return botAccountEvent(state, change.userId, 'update', { api_key: change.apiKey });
    case 'message.sent':
    case 'message.edited':
      return [...messageEvents(state, change), ...attachmentLinkEvents(state, change)];
    case 'attachment.uploaded':
    case 'attachment.deleted':
      return attachmentEvents(state, change);
    case 'emoji.added':
    case 'emoji.deactivated':
      return eachToRealm(state, emojiEvents(state));
    case 'linkifier.added':
    case 'linkifier.updated':
    case 'linkifier.removed':
    case 'linkifiers.reordered':
      return eachToRealm(state, linkifierEvents(state));
    case 'playground.added':
    case 'playground.removed':
      return eachToRealm(state, playgroundEvents(state));
    case 'channel_folder.created':
    case 'channel_folder.updated':
    case 'channel_folders.reordered':
      return eachToRealm(state, channelFolderEvents(state, change));
    case 'realm_domain.added':
    case 'realm_domain.changed':
    case 'realm_domain.removed':
      return eachToRealm(state, realmDomainEvents(change));
    // The whole list after each change, to those who are not guests, as the original sends it.
    case 'default_channel_group.created':
    case 'default_channel_group.updated':
    case 'default_channel_group.deleted': {
      const userIds = [...state.users.values()].filter((user) => user.isActive && user.role !== Role.guest).map((user) => user.userId);
      return [{ realmId: state.realmId, audience: { kind: 'users', userIds }, event: { type: 'default_stream_groups', default_stream_groups: defaultChannelGroupsView(state) } satisfies WireEventOf<'default_stream_groups'> }];
    }
    case 'invitations.created':
    case 'invitation.revoked':
    case 'invitation.resent':
    case 'invitation.used':
    case 'invitations.forgotten':
      return invitationEvents(state, change);
    case 'user.avatar_changed': {
      const user = state.users.get(change.userId);
      return user ? avatarEvents(state, user) : [];
    }
    case 'messages.deleted':
    case 'reaction.added':
    case 'reaction.removed':
    case 'message.flags_changed':
      return messageEvents(state, change);
    case 'submessage.added':
      return submessageEvents(state, change);
    case 'realm_export.requested':
    case 'realm_export.completed':
    case 'realm_export.failed':
      return realmExportEvents(state);
    // The bot is a system bot: clients learn of it at registration (`cross_realm_bots`), as of the original's.
    // Mostly to end the polls held open: the next request of every client is refused (401).
    case 'realm.deactivated':
      return toRealm(state, { type: 'realm', op: 'deactivated', realm_id: state.realmId } satisfies WireEventOf<'realm', 'deactivated'>);
    case 'realm.created':
    case 'user.password_changed':
    case 'notification_bot.created':
      return [];
  }
}
