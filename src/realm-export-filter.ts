import { newApiKey } from '../actors/ids.ts';
import type { Channel } from '../actors/realm/channels/state.ts';
import { EXPORT_PUBLIC, type ExportType } from '../actors/realm/exports/state.ts';
import { emptyInvitationStore, invitationStoreToRecord } from '../actors/realm/invitations/state.ts';
import { readsChannelHistory } from '../actors/realm/messages/access.ts';
import { PERSONAL_FLAGS, type MessageStoreRecord, type StoredMessage } from '../actors/realm/messages/state.ts';
import type { RealmRecord, RealmState, UserProfile } from '../actors/realm/state.ts';
import type { PersonalRecord } from '../actors/runtime.ts';
import { emptyUserState, userToRecord } from '../actors/user/state.ts';

/** The message store's part of an export's organization record, as the export began (ExportScope.messageHead). */
export type ExportMessageHead = Pick<MessageStoreRecord, 'nextId' | 'flags'>;

/**
 * What an export made through the API (POST /export/realm) holds, as the original's export types: no
 * credentials ever (API keys are replaced by new ones nobody knows, password hashes and bot tokens left out,
 * invitation links dropped), and of private data only what its users consented to export:
 * - public (1): public channels and their messages; no private channel, no direct message, no personal state
 *   (drafts, scheduled messages, settings, read and starred flags), which every user gets anew.
 * - full with consent (2): besides, the private channels and direct messages that a consenting user can read,
 *   and the personal state of the users who consented (`allow_private_data_export`).
 * The operator's `chat-server export-realm` is a full copy for moving a server, credentials included.
 */
export class ExportScope {
  /**
   * Each channel's messages that go, as the export began: all, or (a private channel no consenting user may
   * read the history of) those a consenting user holds; none for a channel not here.
   */
  private readonly channels = new Map<number, 'all' | 'held'>();

  constructor(
    private readonly state: RealmState,
    readonly type: ExportType,
    /** the users who consented to export their private data */
    readonly consented: ReadonlySet<number>,
  ) {
    for (const channel of state.channels.values()) {
      if (!channel.inviteOnly) this.channels.set(channel.id, 'all');
      else if (type !== EXPORT_PUBLIC) this.channels.set(channel.id, this.consentingReader(channel) ? 'all' : 'held');
    }
  }

  /** Is the message part of the export? Judged by its channel's standing when the export began. */
  includes(message: StoredMessage): boolean {
    const { recipient } = message;
    if (recipient.kind === 'channel') {
      const kept = this.channels.get(recipient.channelId);
      return kept === 'all' || (kept === 'held' && message.userIds.some((userId) => this.consented.has(userId)));
    }
    return this.type !== EXPORT_PUBLIC && recipient.userIds.some((userId) => this.consented.has(userId));
  }

  /** May the private channel's history be read by a user who consented? */
  private consentingReader(channel: Channel): boolean {
    return [...(this.state.subscriptions.get(channel.id)?.keys() ?? [])].some((userId) => this.consented.has(userId) && readsChannelHistory(this.state, channel, userId));
  }

  /**
   * What the export takes of the message store as it begins, without reading a message: where its history
   * ends, and the flags of the users whose personal state it keeps.
   */
  messageHead(): ExportMessageHead {
    const store = this.state.messages;
    const flags = {} as ExportMessageHead['flags'];
    const keeping = [...this.consented].filter((userId) => this.keepsPersonal(userId)).sort((a, b) => a - b);
    for (const flag of PERSONAL_FLAGS) {
      flags[flag] = [];
      for (const userId of keeping) {
        const ids = store.flags[flag].get(userId);
        if (ids?.size) flags[flag].push([userId, [...ids]]);
      }
    }
    return { nextId: store.nextId, flags };
  }

  /** The message as the export stores it: alert word matches are personal. */
  message(message: StoredMessage): StoredMessage {
    if (!message.alertedUserIds) return message;
    const alerted = message.alertedUserIds.filter((userId) => this.keepsPersonal(userId));
    const { alertedUserIds: _, ...rest } = message;
    return alerted.length ? { ...rest, alertedUserIds: alerted } : rest;
  }

  keepsPersonal(userId: number): boolean {
    return this.type !== EXPORT_PUBLIC && this.consented.has(userId);
  }

  /**
   * The organization's record, without its messages (which the job adds a slice at a time), filtered: `record`
   * and `head` as the export began, the messages kept and the recipients they went to. Recipient ids are the
   * store's now: a message moved since may have taken a new one.
   */
  realmRecord(record: RealmRecord, head: ExportMessageHead, keptMessageIds: ReadonlySet<number>, usedRecipients: ReadonlySet<number>): RealmRecord {
    const channels = this.type === EXPORT_PUBLIC ? record.channels.filter((channel) => !channel.inviteOnly) : record.channels;
    const channelIds = new Set(channels.map((channel) => channel.id));
    const store = this.state.messages;
    const flags = {} as ExportMessageHead['flags'];
    for (const flag of PERSONAL_FLAGS) {
      flags[flag] = [];
      for (const [userId, ids] of head.flags[flag]) {
        const kept = ids.filter((id) => keptMessageIds.has(id));
        if (kept.length) flags[flag].push([userId, kept]);
      }
    }
    return {
      ...record,
      users: record.users.map(withoutCredentials),
      notificationBot: record.notificationBot ? withoutCredentials(record.notificationBot) : null,
      channels,
      subscriptions: record.subscriptions.filter(([channelId]) => channelIds.has(channelId)),
      messages: {
        messages: [],
        holderLists: [],
        nextId: head.nextId,
        // A direct conversation's key names its participants: only those of exported messages go.
        recipientIds: [...store.recipientIds].filter(([key, id]) => usedRecipients.has(id) || (key.startsWith('c') && channelIds.has(Number(key.slice(1))))),
        nextRecipientId: store.nextRecipientId,
        flags,
      },
      attachments: record.attachments && {
        ...record.attachments,
        attachments: record.attachments.attachments
          .map((attachment) => ({ ...attachment, messageIds: attachment.messageIds.filter((id) => keptMessageIds.has(id)) }))
          .filter((attachment) => attachment.messageIds.length > 0),
      },
      submessages: record.submessages && { ...record.submessages, list: record.submessages.list.filter((submessage) => keptMessageIds.has(submessage.messageId)) },
      invitations: invitationStoreToRecord(emptyInvitationStore()),
      exports: { list: [], nextId: 1 },
    };
  }

  /** Each user's personal state: kept for those who consented (but for push registrations and OAuth tokens), new for the others. */
  personalRecord(record: PersonalRecord): PersonalRecord {
    const { realmId, userId } = record.state;
    if (!this.keepsPersonal(userId)) return { value: record.value, state: userToRecord(emptyUserState(realmId, userId)) };
    return { value: record.value, state: { ...record.state, pushTokens: [], pushDevices: [], videoToken: null, pendingEmailChange: null } };
  }
}

function withoutCredentials(user: UserProfile): UserProfile {
  const copy: UserProfile = { ...user, apiKey: newApiKey(), passwordHash: null };
  if (user.bot) copy.bot = { ...user.bot, services: user.bot.services.map((service) => ({ ...service, token: newApiKey() })) };
  return copy;
}
