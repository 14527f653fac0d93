import type { RealmChange } from '../changes.ts';
import type { RealmState } from '../state.ts';
import { realmVersion } from '../version.ts';
import type { StoredMessage } from './state.ts';
import { messageView, type ViewOptions } from './views.ts';

/** One message's JSON texts, one per combination of view options, valid for one version of its realm. */
interface Entry {
  version: number;
  texts: (string | undefined)[];
}

/**
 * Messages' API objects (messageView, without the per-user `flags`) as JSON text, each left open (no closing
 * brace) so that a fetch appends its user's fields: serializing the 50 messages of a page was about a
 * quarter of a GET /messages. What a view reads besides its message (users, channels, settings, linkifiers)
 * moves the realm's version (version.ts), which every entry is checked against; the changes that alter a
 * message itself (edits and moves, reactions, deletions) drop its entry (forgetChangedViews). Bounded as
 * the bodies read back (CHAT_MESSAGE_BODY_CACHE): the most recently read stay.
 */
class MessageViews {
  private readonly entries = new Map<number, Entry>();

  constructor(private readonly limit: number) {}

  open(state: RealmState, message: StoredMessage, options: ViewOptions): string {
    const version = realmVersion(state);
    const slot = (options.applyMarkdown ? 1 : 0) | (options.clientExtavatar ? 2 : 0) | (options.allowEmptyTopicName ? 4 : 0);
    let entry = this.entries.get(message.id);
    if (entry) {
      // Read again: it goes to the back of the eviction order.
      this.entries.delete(message.id);
      if (entry.version !== version) entry = { version, texts: [] };
    } else {
      entry = { version, texts: [] };
      if (this.entries.size >= this.limit) this.entries.delete(this.entries.keys().next().value!);
    }
    this.entries.set(message.id, entry);
    return (entry.texts[slot] ??= JSON.stringify(messageView(state, message, options)).slice(0, -1));
  }

  forget(messageId: number): void {
    this.entries.delete(messageId);
  }
}

/** Kept beside the state rather than in it, so snapshots do not store it (as version.ts). */
const views = new WeakMap<RealmState, MessageViews>();

/** The message's view as JSON text without its closing brace (see MessageViews). */
export function openMessageJson(state: RealmState, message: StoredMessage, options: ViewOptions): string {
  let cache = views.get(state);
  if (!cache) views.set(state, (cache = new MessageViews(state.messages.bodies.limit)));
  return cache.open(state, message, options);
}

/** Drops the views of the messages a history change altered; other changes move the realm's version. */
export function forgetChangedViews(state: RealmState, change: RealmChange): void {
  const cache = views.get(state);
  if (!cache) return;
  switch (change.type) {
    case 'message.edited':
      for (const id of change.messageIds) cache.forget(id);
      return;
    case 'reaction.added':
    case 'reaction.removed':
      cache.forget(change.messageId);
      return;
    case 'submessage.added':
      cache.forget(change.submessage.messageId);
      return;
    case 'messages.deleted':
      for (const group of change.groups) for (const id of group.messageIds) cache.forget(id);
      return;
    // Not the message itself: what else a view reads moves the realm's version (version.ts).
    case 'attachment.deleted':
    case 'attachment.uploaded':
    case 'bot.updated':
    case 'channel.created':
    case 'channel.updated':
    case 'channel_folder.created':
    case 'channel_folder.updated':
    case 'channel_folders.reordered':
    case 'default_channel_group.created':
    case 'default_channel_group.deleted':
    case 'default_channel_group.updated':
    case 'emoji.added':
    case 'emoji.deactivated':
    case 'group.created':
    case 'group.members_changed':
    case 'group.subgroups_changed':
    case 'group.updated':
    case 'invitation.resent':
    case 'invitation.revoked':
    case 'invitation.used':
    case 'invitations.created':
    case 'linkifier.added':
    case 'linkifier.removed':
    case 'linkifier.updated':
    case 'linkifiers.reordered':
    case 'message.flags_changed':
    case 'message.sent':
    case 'notification_bot.created':
    case 'playground.added':
    case 'playground.removed':
    case 'profile_data.changed':
    case 'profile_field.created':
    case 'profile_field.deleted':
    case 'profile_field.updated':
    case 'profile_fields.reordered':
    case 'realm.created':
    case 'realm.deactivated':
    case 'realm.permission_changed':
    case 'realm.property_changed':
    case 'realm_domain.added':
    case 'realm_domain.changed':
    case 'realm_domain.removed':
    case 'realm_export.completed':
    case 'realm_export.failed':
    case 'realm_export.requested':
    case 'settings_default.changed':
    case 'subscription.properties_set':
    case 'subscriptions.added':
    case 'subscriptions.removed':
    case 'user.api_key_changed':
    case 'user.avatar_changed':
    case 'user.created':
    case 'user.deactivated':
    case 'user.email_changed':
    case 'user.email_visibility_changed':
    case 'user.password_changed':
    case 'user.reactivated':
    case 'user.updated':
      return;
    default: {
      const unknown: never = change;
      throw new Error(`unknown realm change ${JSON.stringify(unknown)}`);
    }
  }
}
