import {
  groupFromRecord,
  groupToRecord,
  type GroupSetting,
  type SystemGroupName,
  type UserGroup,
  type UserGroupRecord,
} from './groups/state.ts';
import type { SettingOverrides } from '../user/settings.ts';
import { fillPermissionDefaults, type RealmPermission } from './permissions.ts';
import type { BotProfile } from './bots/state.ts';
import { emptyProfileFieldStore, profileFieldStoreFromRecord, profileFieldStoreToRecord, type ProfileFieldStore, type ProfileFieldStoreRecord } from './profile-fields/state.ts';
import { DEFAULT_REALM_SETTINGS, type RealmSettings } from './settings/state.ts';
import { channelKey, fillLaterChannelPermissions, type Channel, type SubscriptionProperties } from './channels/state.ts';
import { emojiStoreFromRecord, emojiStoreToRecord, emptyEmojiStore, type EmojiStore, type EmojiStoreRecord } from './emoji/state.ts';
import { emptyLinkifierStore, linkifierStoreFromRecord, linkifierStoreToRecord, type LinkifierStore, type LinkifierStoreRecord } from './linkifiers/state.ts';
import { emptyPlaygroundStore, type PlaygroundStore } from './playgrounds/state.ts';
import { emptyRealmExportStore, type RealmExportStore } from './exports/state.ts';
import { emptyChannelFolderStore, type ChannelFolderStore } from './channel-folders/state.ts';
import type { RealmDomainList } from './domains/state.ts';
import { emptyDefaultChannelGroupStore, type DefaultChannelGroupStore } from './default-channel-groups/state.ts';
import { emptyInvitationStore, invitationStoreFromRecord, invitationStoreToRecord, type InvitationStore, type InvitationStoreRecord } from './invitations/state.ts';
import { attachmentStoreFromRecord, attachmentStoreToRecord, emptyAttachmentStore, type AttachmentStore, type AttachmentStoreRecord } from './attachments/state.ts';
import type { MessageHeadRecord } from './messages/chunks.ts';
import { emptySubmessageStore, submessageStoreFromRecord, submessageStoreToRecord, type SubmessageStore, type SubmessageStoreRecord } from './submessages/state.ts';
import { emptyMessageStore, messageStoreFromRecord, messageStoreToRecord, type MessageStore, type MessageStoreRecord } from './messages/state.ts';

// Roles live in their own module: the groups module needs them, and this one needs the groups.
export { Role, ROLE_VALUES } from './roles.ts';
import { Role } from './roles.ts';

export interface UserProfile {
  userId: number;
  /** the API email, unique in the realm */
  email: string;
  fullName: string;
  role: Role;
  isBot: boolean;
  isActive: boolean;
  apiKey: string;
  /** scrypt hash, or null for an account that cannot log in with a password */
  passwordHash: string | null;
  /** the server-level permission that POST /users needs on top of the administrator role */
  canCreateUsers: boolean;
  /** the server-level permission that PATCH /users/{id} `new_email` needs (absent: not held) */
  canChangeUserEmails?: boolean;
  /** UNIX seconds */
  dateJoined: number;
  timezone: string;
  avatarVersion: number;
  /** an uploaded avatar's path id in the avatar store (src/uploads.ts); absent: the server's default picture */
  avatarPathId?: string;
  /** a bot's type, owner and configuration; absent for people */
  bot?: BotProfile;
  /**
   * Who may read the real address (the user setting `email_address_visibility`, email-visibility.ts);
   * absent: everyone, which every user had before the setting was applied. Bots are always everyone.
   */
  emailAddressVisibility?: number;
}

export interface RealmState {
  realmId: number;
  /** the subdomain; '' is the realm of the bare host */
  stringId: string;
  name: string;
  description: string;
  dateCreated: number;
  deactivated: boolean;
  users: Map<number, UserProfile>;
  /** index: lower-cased email -> user id */
  userIdByEmail: Map<string, number>;
  nextUserId: number;
  groups: Map<number, UserGroup>;
  systemGroupIds: Map<SystemGroupName, number>;
  nextGroupId: number;
  /** the realm's group-setting permissions (realm_can_*), see realm/permissions.ts */
  permissions: Record<RealmPermission, GroupSetting>;
  channels: Map<number, Channel>;
  /** index: lower-cased channel name -> id */
  channelIdByName: Map<string, number>;
  /** channel -> subscriber -> properties */
  subscriptions: Map<number, Map<number, SubscriptionProperties>>;
  /** index: user -> channels subscribed to */
  subscribedBy: Map<number, Set<number>>;
  /** user -> channels left, with the properties they had */
  unsubscribedBy: Map<number, Map<number, SubscriptionProperties>>;
  /**
   * The channels whose subscriptions (members, those who left, their properties) changed since a snapshot
   * last stored them: a snapshot writes these channels' subscription records only (snapshot.ts). Not stored.
   */
  unsavedSubscriptions: Set<number>;
  nextChannelId: number;
  /** the settings new users start from: only those an administrator set; the rest are the table's defaults */
  userSettingsDefaults: SettingOverrides;
  /** messages, their indexes and the per-user flags (messages/state.ts) */
  messages: MessageStore;
  /** the data widgets attach to their messages (submessages/state.ts) */
  submessages: SubmessageStore;
  /** the settings of PATCH /realm that the server obeys (settings/state.ts) */
  settings: RealmSettings;
  /** custom profile fields and every user's values (profile-fields/state.ts) */
  profileFields: ProfileFieldStore;
  /** uploaded files and the messages linking them (attachments/state.ts) */
  attachments: AttachmentStore;
  /** custom emoji, deactivated ones included (emoji/state.ts) */
  emoji: EmojiStore;
  /** patterns turned into links in messages and topics, in processing order (linkifiers/state.ts) */
  linkifiers: LinkifierStore;
  /** code playgrounds offered beside code blocks (playgrounds/state.ts); plain data, stored as it is */
  playgrounds: PlaygroundStore;
  /** channel folders in display order (channel-folders/state.ts); plain data, stored as it is */
  channelFolders: ChannelFolderStore;
  /** the domains sign-ups are limited to with `emails_restricted_to_domains` (domains/state.ts); plain data */
  domains: RealmDomainList;
  /** groups of default channels offered together (default-channel-groups/state.ts); plain data */
  defaultChannelGroups: DefaultChannelGroupStore;
  /** email invitations and reusable invitation links (invitations/state.ts) */
  invitations: InvitationStore;
  /** data exports asked for through the API (exports/state.ts); plain data, stored as it is */
  exports: RealmExportStore;
  /**
   * The system bot that posts the server's own notices (notifications/state.ts): kept out of `users` so the
   * directory and its counts show people and their bots only; null until a notice first needs it.
   */
  notificationBot: UserProfile | null;
  /**
   * The domain of the stand-in addresses `user{id}@{domain}` (email-visibility.ts): the realm's host, which
   * the front end knows and the runtime sets when it starts the realm; not stored.
   */
  emailDomain: string;
  /**
   * The organization's URL (`realm_url`), asked each time it is needed: the front end knows it, and its port
   * only once the server listens. Set by the runtime when it starts the realm; not stored.
   */
  organizationUrl: () => string;
}

/** What a realm snapshot stores: collections as arrays, indexes rebuilt on load. */
type Derived = 'users' | 'userIdByEmail' | 'groups' | 'systemGroupIds' | 'channels' | 'channelIdByName' | 'subscriptions' | 'subscribedBy' | 'unsubscribedBy' | 'unsavedSubscriptions' | 'messages' | 'profileFields' | 'attachments' | 'emoji' | 'linkifiers' | 'invitations' | 'submessages';

/** A subscription in a snapshot: [channel id, user id, properties, still subscribed]. */
export type SubscriptionRecord = [number, number, SubscriptionProperties, boolean];

export type RealmRecord = Omit<RealmState, Derived | 'userSettingsDefaults' | 'settings' | 'notificationBot' | 'emailDomain' | 'organizationUrl'> & {
  users: UserProfile[];
  groups: UserGroupRecord[];
  channels: Channel[];
  /** every subscription in exports and in snapshots before format 6; empty where `subscriptionsApart` */
  subscriptions: SubscriptionRecord[];
  /** snapshots of format 6 on: the subscriptions are in records of their own, one per channel (snapshot.ts) */
  subscriptionsApart?: boolean;
  /** absent in snapshots written before defaults for new users existed */
  userSettingsDefaults?: SettingOverrides;
  /**
   * Every message, in exports and in snapshots of format 1; absent in snapshots written before messages
   * existed, and in those of format 2, whose messages are in chunk records (snapshot.ts) and `messageHead`.
   */
  messages?: MessageStoreRecord;
  /** snapshots of format 2: the message store's counters; its messages and flags are in chunk records */
  messageHead?: MessageHeadRecord;
  /** absent in snapshots written before realm settings existed; settings added later than the snapshot are absent from it */
  settings?: Partial<RealmSettings>;
  /** absent in snapshots written before custom profile fields existed */
  profileFields?: ProfileFieldStoreRecord;
  /** absent in snapshots written before uploads existed */
  attachments?: AttachmentStoreRecord;
  /** absent in snapshots written before custom emoji existed */
  emoji?: EmojiStoreRecord;
  /** absent in snapshots written before linkifiers existed */
  linkifiers?: LinkifierStoreRecord;
  /** absent in snapshots written before the notification bot existed */
  notificationBot?: UserProfile | null;
  /** absent in snapshots written before invitations existed */
  invitations?: InvitationStoreRecord;
  /** absent in snapshots written before submessages existed */
  submessages?: SubmessageStoreRecord;
};

/** The stand-in addresses' domain until the runtime sets the realm's host (a realm built outside a runtime). */
export const DEFAULT_EMAIL_DOMAIN = 'localhost';

export function emptyRealm(realmId: number, stringId: string, name: string, dateCreated: number): RealmState {
  return {
    realmId,
    stringId,
    name,
    description: '',
    dateCreated,
    deactivated: false,
    users: new Map(),
    userIdByEmail: new Map(),
    nextUserId: 1,
    groups: new Map(),
    systemGroupIds: new Map(),
    nextGroupId: 1,
    permissions: {} as Record<RealmPermission, GroupSetting>,
    channels: new Map(),
    channelIdByName: new Map(),
    subscriptions: new Map(),
    subscribedBy: new Map(),
    unsubscribedBy: new Map(),
    unsavedSubscriptions: new Set(),
    nextChannelId: 1,
    userSettingsDefaults: {},
    messages: emptyMessageStore(),
    submessages: emptySubmessageStore(),
    settings: { ...DEFAULT_REALM_SETTINGS },
    profileFields: emptyProfileFieldStore(),
    attachments: emptyAttachmentStore(),
    emoji: emptyEmojiStore(),
    linkifiers: emptyLinkifierStore(),
    playgrounds: emptyPlaygroundStore(),
    channelFolders: emptyChannelFolderStore(),
    domains: [],
    defaultChannelGroups: emptyDefaultChannelGroupStore(),
    invitations: emptyInvitationStore(),
    exports: emptyRealmExportStore(),
    notificationBot: null,
    emailDomain: DEFAULT_EMAIL_DOMAIN,
    organizationUrl: () => `http://${DEFAULT_EMAIL_DOMAIN}`,
  };
}

/** The realm as one record, every message included (exports, and tests comparing whole states). */
export function realmToRecord(state: RealmState): RealmRecord {
  return { ...realmRecordWithoutMessages(state), messages: messageStoreToRecord(state.messages) };
}

/**
 * The realm as a record, but for its message store, which snapshots write in chunks (snapshot.ts); with
 * `subscriptionsApart`, without its subscriptions either, which snapshots write per channel.
 */
export function realmRecordWithoutMessages(state: RealmState, subscriptionsApart = false): RealmRecord {
  const { users, userIdByEmail: _a, groups, systemGroupIds: _b, channels, channelIdByName: _c, subscriptions, subscribedBy: _d, unsubscribedBy, unsavedSubscriptions: _h, messages: _e, profileFields, attachments, emoji, linkifiers, invitations, submessages, emailDomain: _f, organizationUrl: _g, ...rest } = state;
  const subscriptionRecords: SubscriptionRecord[] = [];
  if (!subscriptionsApart) {
    for (const [channelId, subscribers] of subscriptions) {
      for (const [userId, properties] of subscribers) subscriptionRecords.push([channelId, userId, properties, true]);
    }
    for (const [userId, left] of unsubscribedBy) {
      for (const [channelId, properties] of left) subscriptionRecords.push([channelId, userId, properties, false]);
    }
  }
  return {
    ...rest,
    ...(subscriptionsApart ? { subscriptionsApart } : {}),
    users: [...users.values()],
    groups: [...groups.values()].map(groupToRecord),
    channels: [...channels.values()],
    subscriptions: subscriptionRecords,
    profileFields: profileFieldStoreToRecord(profileFields),
    attachments: attachmentStoreToRecord(attachments),
    emoji: emojiStoreToRecord(emoji),
    linkifiers: linkifierStoreToRecord(linkifiers),
    invitations: invitationStoreToRecord(invitations),
    submessages: submessageStoreToRecord(submessages),
  };
}

export function realmFromRecord(record: RealmRecord): RealmState {
  const { users, groups, channels, subscriptions, subscriptionsApart: _apart, messages, messageHead: _head, settings, profileFields, attachments, emoji, linkifiers, invitations, submessages, ...rest } = record;
  const state: RealmState = { ...emptyRealm(record.realmId, record.stringId, record.name, record.dateCreated), ...rest };
  state.settings = { ...DEFAULT_REALM_SETTINGS, ...settings };
  state.profileFields = profileFieldStoreFromRecord(profileFields);
  for (const user of users) {
    state.users.set(user.userId, user);
    state.userIdByEmail.set(user.email.toLowerCase(), user.userId);
  }
  for (const group of groups) {
    state.groups.set(group.id, groupFromRecord(group));
    if (group.isSystemGroup) state.systemGroupIds.set(group.name as SystemGroupName, group.id);
  }
  for (const channel of channels) {
    fillLaterChannelPermissions(channel, state.systemGroupIds.get('role:nobody'));
    state.channels.set(channel.id, channel);
    state.channelIdByName.set(channelKey(channel.name), channel.id);
  }
  // Marked unsaved: a snapshot of format 6 stores them per channel (none are here then: the loader adds them).
  loadSubscriptions(state, subscriptions);
  state.messages = messageStoreFromRecord(messages);
  state.attachments = attachmentStoreFromRecord(attachments);
  state.emoji = emojiStoreFromRecord(emoji);
  state.linkifiers = linkifierStoreFromRecord(linkifiers);
  state.invitations = invitationStoreFromRecord(invitations);
  state.submessages = submessageStoreFromRecord(submessages);
  if (state.groups.size > 0) fillPermissionDefaults(state);
  return state;
}

/** Subscription records added to the realm's (the channels they name marked unsaved). */
export function loadSubscriptions(state: RealmState, records: Iterable<SubscriptionRecord>): void {
  for (const [channelId, userId, properties, subscribed] of records) {
    if (subscribed) addSubscription(state, channelId, userId, properties);
    else {
      setOf(state.unsubscribedBy, userId, () => new Map()).set(channelId, properties);
      state.unsavedSubscriptions.add(channelId);
    }
  }
}

/** The subscription records of each of `channelIds`: its members, then those who left it; empty for a channel with neither. */
export function channelSubscriptionRecords(state: RealmState, channelIds: Iterable<number>): Map<number, SubscriptionRecord[]> {
  const out = new Map<number, SubscriptionRecord[]>();
  for (const channelId of channelIds) {
    const records: SubscriptionRecord[] = [];
    for (const [userId, properties] of state.subscriptions.get(channelId) ?? []) records.push([channelId, userId, properties, true]);
    out.set(channelId, records);
  }
  // Those who left are kept per user: one pass over them all, for every channel asked for at once.
  for (const [userId, left] of state.unsubscribedBy) {
    for (const [channelId, properties] of left) out.get(channelId)?.push([channelId, userId, properties, false]);
  }
  return out;
}

export function addSubscription(state: RealmState, channelId: number, userId: number, properties: SubscriptionProperties): void {
  setOf(state.subscriptions, channelId, () => new Map()).set(userId, properties);
  setOf(state.subscribedBy, userId, () => new Set()).add(channelId);
  state.unsubscribedBy.get(userId)?.delete(channelId);
  state.unsavedSubscriptions.add(channelId);
}

export function removeSubscription(state: RealmState, channelId: number, userId: number): void {
  const properties = state.subscriptions.get(channelId)?.get(userId);
  if (!properties) return;
  state.subscriptions.get(channelId)!.delete(userId);
  state.subscribedBy.get(userId)?.delete(channelId);
  setOf(state.unsubscribedBy, userId, () => new Map()).set(channelId, properties);
  state.unsavedSubscriptions.add(channelId);
}

function setOf<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) map.set(key, (value = make()));
  return value;
}

export function findUserByEmail(state: RealmState, email: string): UserProfile | undefined {
  const id = state.userIdByEmail.get(email.toLowerCase());
  return id === undefined ? undefined : state.users.get(id);
}

export const isAdmin = (user: UserProfile) => user.role <= Role.administrator;

/**
 * The active people who administer the realm: the direct members of the role groups of owners and
 * administrators (kept in step with roles), so that it costs the few administrators, not every user.
 */
export function humanAdministrators(state: RealmState): number[] {
  const out: number[] = [];
  for (const name of ['role:owners', 'role:administrators'] as const) {
    const group = state.groups.get(state.systemGroupIds.get(name) ?? -1);
    for (const userId of group?.members ?? []) {
      const user = state.users.get(userId);
      if (user?.isActive && !user.isBot && isAdmin(user)) out.push(userId);
    }
  }
  return [...new Set(out)];
}

export function activeOwnerCount(state: RealmState): number {
  let count = 0;
  for (const user of state.users.values()) if (user.isActive && user.role === Role.owner && !user.isBot) count++;
  return count;
}
