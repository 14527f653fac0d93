import type { GroupSetting } from '../groups/state.ts';

export const CHANNEL_PERMISSIONS = [
  'can_add_subscribers_group',
  'can_remove_subscribers_group',
  'can_administer_channel_group',
  'can_send_message_group',
  'can_subscribe_group',
  // Feature levels 396, 402 and 407: what a channel lets its own users do beyond the organization's settings.
  'can_delete_any_message_group',
  'can_delete_own_message_group',
  'can_move_messages_out_of_channel_group',
  'can_move_messages_within_channel_group',
  'can_resolve_topics_group',
] as const;

/** The permissions added after channels were first stored, which channels made before lack: nobody holds them. */
export const LATER_CHANNEL_PERMISSIONS = [
  'can_delete_any_message_group',
  'can_delete_own_message_group',
  'can_move_messages_out_of_channel_group',
  'can_move_messages_within_channel_group',
  'can_resolve_topics_group',
] as const satisfies readonly (typeof CHANNEL_PERMISSIONS)[number][];
export type ChannelPermission = (typeof CHANNEL_PERMISSIONS)[number];

export const CHANNEL_TOPICS_POLICIES = ['inherit', 'allow_empty_topic', 'disable_empty_topic', 'empty_topic_only'] as const;
export type ChannelTopicsPolicy = (typeof CHANNEL_TOPICS_POLICIES)[number];

export interface Channel {
  id: number;
  name: string;
  description: string;
  renderedDescription: string;
  /** UNIX seconds */
  dateCreated: number;
  creatorId: number | null;
  inviteOnly: boolean;
  isWebPublic: boolean;
  historyPublicToSubscribers: boolean;
  /** null: the realm's setting; -1: forever */
  messageRetentionDays: number | null;
  isArchived: boolean;
  isDefault: boolean;
  firstMessageId: number | null;
  /** the channel folder it is shown in (channel-folders/state.ts); absent in snapshots written before folders: none */
  folderId?: number | null;
  /** named topics and the empty one (channels/topics-policy.ts); absent in snapshots from before: inherit */
  topicsPolicy?: ChannelTopicsPolicy;
  permissions: Record<ChannelPermission, GroupSetting>;
}

/** A channel stored before the later permissions existed gets them as new channels have them: held by nobody. */
export function fillLaterChannelPermissions(channel: Channel, nobodyGroupId: number | undefined): void {
  if (nobodyGroupId === undefined) return;
  for (const name of LATER_CHANNEL_PERMISSIONS) channel.permissions[name] ??= nobodyGroupId;
}

/** Nullable notification settings inherit the user's defaults. */
export interface SubscriptionProperties {
  color: string;
  isMuted: boolean;
  pinToTop: boolean;
  desktopNotifications: boolean | null;
  audibleNotifications: boolean | null;
  pushNotifications: boolean | null;
  emailNotifications: boolean | null;
  wildcardMentionsNotify: boolean | null;
}

/** The original server's palette for new subscriptions: each takes the first color the user has not used. */
export const SUBSCRIPTION_COLORS = [
  '#76ce90', '#fae589', '#a6c7e5', '#e79ab5', '#bfd56f', '#f4ae55', '#b0a5fd', '#addfe5',
  '#f5ce6e', '#c2726a', '#94c849', '#bd86e5', '#ee7e4a', '#a6dcbf', '#95a5fd', '#53a063',
  '#9987e1', '#e4523d', '#c2c2c2', '#4f8de4', '#c6a8ad', '#e7cc4d', '#c8bebf', '#a47462',
];

export function defaultProperties(color: string): SubscriptionProperties {
  return {
    color, isMuted: false, pinToTop: false, desktopNotifications: null, audibleNotifications: null,
    pushNotifications: null, emailNotifications: null, wildcardMentionsNotify: null,
  };
}

export const channelKey = (name: string) => name.trim().toLowerCase();
