import type { Caller } from '../commands.ts';
import type { GroupSetting } from '../groups/state.ts';
import type { Principal } from './principals.ts';
import type { ChannelPermission, ChannelTopicsPolicy, SubscriptionProperties } from './state.ts';

/** What a new channel is made with (parameters that existing channels ignore). */
export interface NewChannelOptions {
  inviteOnly: boolean;
  isWebPublic: boolean;
  historyPublicToSubscribers?: boolean;
  messageRetentionDays: number | null;
  isDefault: boolean;
  permissions: Partial<Record<ChannelPermission, GroupSetting>>;
  /** the channel folder to show it in */
  folderId?: number | null;
  topicsPolicy?: ChannelTopicsPolicy;
  /** the notification bot announces the new public channels (notifications/decide.ts) */
  announce?: boolean;
}

export type ChannelCommand =
  | {
      type: 'channel.subscribe';
      caller: Caller;
      /** by name: those that do not exist are made */
      channels: { name: string; description: string }[];
      /** whom to subscribe, resolved in the realm's turn (principals.ts) */
      principals: readonly Principal[];
      options: NewChannelOptions;
      /** when false, channels the caller may not add to are skipped instead of failing the request */
      authorizationErrorsFatal: boolean;
      /** POST /channels/create: the channel must be new */
      mustCreate?: boolean;
      /**
       * `send_new_subscription_messages`: the notification bot tells each user subscribed by someone else;
       * `botDomain` in case the bot must come into being for it. Absent: nobody is told.
       */
      newSubscriptionMessages?: { botDomain: string };
    }
  /** `channels` by name, resolved with `principals` in the realm's turn: an unknown one refuses the whole command */
  | { type: 'channel.unsubscribe'; caller: Caller; channels: readonly string[]; principals: readonly Principal[] }
  /**
   * PATCH /users/me/subscriptions, for the caller, in one turn: `remove` is resolved before anything changes (an
   * unknown name refuses the request), then `add` is decided as a subscribe (its new channels made with
   * `options`), then `remove`; a channel named in both is removed.
   */
  | { type: 'channel.subscriptions_edit'; caller: Extract<Caller, { kind: 'user' }>; add: { name: string; description: string }[]; remove: readonly string[]; options: NewChannelOptions }
  | {
      type: 'channel.update';
      caller: Caller;
      id: number;
      name?: string;
      description?: string;
      inviteOnly?: boolean;
      isWebPublic?: boolean;
      historyPublicToSubscribers?: boolean;
      messageRetentionDays?: number | null;
      isArchived?: boolean;
      isDefault?: boolean;
      /** null: out of its folder */
      folderId?: number | null;
      topicsPolicy?: ChannelTopicsPolicy;
      permissions?: Partial<Record<ChannelPermission, GroupSetting>>;
      /** the values the client holds current (a setting's `old`); any other current value refuses the update */
      expectedPermissions?: Partial<Record<ChannelPermission, GroupSetting>>;
    }
  | { type: 'subscription.properties'; caller: Caller; userId: number; entries: { channelId: number; properties: Partial<SubscriptionProperties> }[] };
