import type { RealmChange } from '../changes.ts';

const NONE: readonly number[] = [];

/**
 * The channels whose settled fields (settledChannelFields) or subscriber list (subscriberIds) a change may
 * alter, for the texts view-json.ts keeps: `'all'` when it may alter any. Those read the channel object
 * (which only channel.created and channel.updated write), its subscriptions (their count and user ids, which
 * only subscriptions.added and subscriptions.removed change) and the system groups' ids (postPolicy), fixed
 * when the realm is created. A user's deactivation, reactivation or role change leaves the user's
 * subscriptions as they are (decide.ts, apply.ts): the subscriber counts and lists still hold the user, as
 * GET /streams/{id} and its members do; a subscription started or ended is a change of its own (a newcomer's
 * default channels: subscriptions.added beside user.created). A channel's group settings are
 * stored in the channel as group ids or member lists, never read through the groups, so group changes touch
 * none. Every type is classified here: a new one does not compile until it is.
 */
export function channelsTouched(change: RealmChange): 'all' | readonly number[] {
  // Asked of every change, each send included: the common answer allocates nothing.
  switch (change.type) {
    case 'channel.created':
      return [change.channel.id];
    case 'channel.updated':
      return [change.id];
    case 'subscriptions.added':
    case 'subscriptions.removed':
      return [...new Set(change.entries.map((entry) => entry.channelId))];
    // Makes the system groups whose ids postPolicy compares with.
    case 'realm.created':
      return 'all';
    // The subscriber's own fields (ownFields), made at each request.
    case 'subscription.properties_set':
    // Users, their roles and role groups, and user groups: none is read by a channel's text (above).
    case 'user.created':
    case 'user.deactivated':
    case 'user.reactivated':
    case 'user.updated':
    case 'user.api_key_changed':
    case 'user.password_changed':
    case 'user.email_changed':
    case 'user.email_visibility_changed':
    case 'user.avatar_changed':
    case 'bot.updated':
    case 'notification_bot.created':
    case 'profile_field.created':
    case 'profile_field.updated':
    case 'profile_field.deleted':
    case 'profile_fields.reordered':
    case 'profile_data.changed':
    case 'group.created':
    case 'group.updated':
    case 'group.members_changed':
    case 'group.subgroups_changed':
    // The realm's own settings: a channel's topics_policy and retention are its own values ('inherit', null), not resolved.
    case 'realm.deactivated':
    case 'realm.property_changed':
    case 'realm.permission_changed':
    case 'settings_default.changed':
    case 'realm_domain.added':
    case 'realm_domain.changed':
    case 'realm_domain.removed':
    // A folder is named by the channel's folder_id only; default channel groups by their own lists.
    case 'channel_folder.created':
    case 'channel_folder.updated':
    case 'channel_folders.reordered':
    case 'default_channel_group.created':
    case 'default_channel_group.updated':
    case 'default_channel_group.deleted':
    case 'emoji.added':
    case 'emoji.deactivated':
    case 'linkifier.added':
    case 'linkifier.updated':
    case 'linkifier.removed':
    case 'linkifiers.reordered':
    case 'playground.added':
    case 'playground.removed':
    case 'attachment.uploaded':
    case 'attachment.deleted':
    case 'invitations.created':
    case 'invitation.revoked':
    case 'invitation.resent':
    case 'invitation.used':
    case 'invitations.forgotten':
    case 'realm_export.requested':
    case 'realm_export.completed':
    case 'realm_export.failed':
    // The history: a channel's first message is part of its traffic, made at each request.
    case 'message.sent':
    case 'message.edited':
    case 'messages.deleted':
    case 'reaction.added':
    case 'reaction.removed':
    case 'message.flags_changed':
    case 'submessage.added':
      return NONE;
    default: {
      // Unreachable while the switch is exhaustive; a record of a type this code does not know touches all.
      const unknown: never = change;
      void unknown;
      return 'all';
    }
  }
}
