import type { PersonalRecord } from '../registry.ts';
import type { PersonalLimits } from '../user/limits.ts';
import { MAX_PUSH_DEVICES } from '../user/push-e2ee.ts';
import { countScheduled, type UserRecord } from '../user/state.ts';
import { activeBotsByOwner } from './bots/state.ts';
import { fillsBound, type Invitation } from './invitations/state.ts';
import type { RealmLimits } from './limits.ts';
import { distinctEmoji, MAX_EMOJI_PER_MESSAGE } from './messages/decide-misc.ts';
import { MAX_PLAYGROUNDS } from './playgrounds/decide.ts';
import { MAX_PROFILE_FIELDS } from './profile-fields/decide.ts';
import type { RealmRecord } from './state.ts';

/**
 * Every configured bound on what an organization's records hold: RealmLimits, each user's PersonalLimits,
 * and the bounds the routes pass to the commands that make the other kinds (Config's max*).
 */
export interface RecordBounds extends RealmLimits, PersonalLimits {
  linkifiers: number;
  channelFolders: number;
  realmDomains: number;
  defaultChannelGroups: number;
  botsPerUser: number;
  remindersPerUser: number;
  navigationViewsPerUser: number;
  submessagesPerMessage: number;
}

/** A kind of thing an organization's records hold more of than the server lets an organization have. */
export interface Excess {
  what: string;
  count: number;
  limit: number;
  /** the RecordBounds field that sets the bound; null: a bound of the server's own, not configured */
  bound: keyof RecordBounds | null;
  /** for a kind bounded per user or per message, the one that holds the most ('user 12'); absent: the organization */
  holder?: string;
}

/** An organization as an export, and Runtime.realmRecords, hold it. */
export interface RealmRecords {
  realm: RealmRecord;
  users: readonly PersonalRecord[];
}

type Bound = Pick<Excess, 'limit' | 'bound'>;
type Configured = (bound: keyof RecordBounds) => Bound;

const fixed = (limit: number): Bound => ({ limit, bound: null });

/**
 * What a whole organization brought in at once (import-realm) holds past `bounds`, counted as the commands
 * that make each kind count it: kept ones included, but for invitations only the usable ones, of each kind
 * apart; for a kind bounded per user or per message, the one holding the most. `now`: UNIX ms, for the
 * invitations' expiry. Empty: within every bound.
 */
export function realmRecordExcess({ realm, users }: RealmRecords, bounds: RecordBounds, now: number): Excess[] {
  const configured: Configured = (bound) => ({ limit: bounds[bound], bound });
  const counted: Excess[] = [
    ...organizationCounts(realm, configured, now),
    ...messageCounts(realm, configured),
    ...personalCounts(realm, users.map(({ state }) => state), configured),
  ];
  return counted.filter(({ count, limit }) => count > limit);
}

function organizationCounts(record: RealmRecord, configured: Configured, now: number): Excess[] {
  const kind = (what: string, count: number, bound: Bound): Excess => ({ what, count, ...bound });
  // Records older than a kind lack it, as a snapshot of then does (realmFromRecord starts them empty).
  return [
    kind('accounts (bots and deactivated ones included)', record.users.length, configured('users')),
    kind('channels (archived ones included)', record.channels.length, configured('channels')),
    kind('user groups (system groups and deactivated ones included)', record.groups.length, configured('userGroups')),
    kind('custom emoji (deactivated ones included)', record.emoji?.emoji.length ?? 0, configured('customEmoji')),
    kind('custom profile fields', record.profileFields?.fields.length ?? 0, fixed(MAX_PROFILE_FIELDS)),
    ...usableInvitations(record, now).map(([what, usable]) => kind(what, usable, configured('invitations'))),
    kind('linkifiers', record.linkifiers?.list.length ?? 0, configured('linkifiers')),
    kind('channel folders (archived ones included)', record.channelFolders?.list.length ?? 0, configured('channelFolders')),
    kind('allowed sign-up domains', record.domains?.length ?? 0, configured('realmDomains')),
    kind('default channel groups', record.defaultChannelGroups?.list.length ?? 0, configured('defaultChannelGroups')),
    kind('code playgrounds', record.playgrounds?.list.length ?? 0, fixed(MAX_PLAYGROUNDS)),
  ];
}

/** The usable invitations of each kind the record holds (what can fill RealmLimits.invitations). */
function usableInvitations(record: RealmRecord, now: number): [string, number][] {
  const emails = new Set(record.users.map((user) => user.email.toLowerCase()));
  const hasAccount = (email: string) => emails.has(email.toLowerCase());
  const usable = (invitations: Invitation[]) => invitations.filter((invitation) => fillsBound(invitation, now, hasAccount)).length;
  const invitations = record.invitations?.invitations ?? [];
  return [
    ['usable email invitations', usable(invitations.filter((invitation) => !invitation.multiuse))],
    ['usable invitation links', usable(invitations.filter((invitation) => invitation.multiuse))],
  ];
}

function messageCounts(record: RealmRecord, configured: Configured): Excess[] {
  const submessages = new Map<number, number>();
  for (const { messageId } of record.submessages?.list ?? []) submessages.set(messageId, (submessages.get(messageId) ?? 0) + 1);
  // A generator: an export may hold millions of messages.
  function* reactions() {
    for (const { id, reactions } of record.messages?.messages ?? []) yield [id, distinctEmoji(reactions).size] as const;
  }
  return [
    most('submessages', 'message', submessages, configured('submessagesPerMessage')),
    most('different emoji reactions', 'message', reactions(), fixed(MAX_EMOJI_PER_MESSAGE)),
  ];
}

function personalCounts(record: RealmRecord, users: readonly UserRecord[], configured: Configured): Excess[] {
  const each = (count: (user: UserRecord) => number) => users.map((user) => [user.userId, count(user)] as const);
  return [
    most('active bots', 'user', activeBotsByOwner(record.users), configured('botsPerUser')),
    most('saved snippets', 'user', each((user) => user.snippets.length), configured('savedSnippets')),
    most('drafts', 'user', each((user) => user.drafts?.length ?? 0), configured('drafts')),
    most('scheduled messages (failed ones included, reminders apart)', 'user', each((user) => countScheduled(user.scheduled ?? [], false)), configured('scheduledMessages')),
    most('reminders', 'user', each((user) => countScheduled(user.scheduled ?? [], true)), configured('remindersPerUser')),
    most('alert words', 'user', each((user) => user.alertWords.length), configured('alertWords')),
    most('topics with a visibility policy', 'user', each((user) => user.userTopics?.length ?? 0), configured('topicPolicies')),
    most('push device tokens', 'user', each((user) => user.pushTokens?.length ?? 0), configured('pushTokens')),
    most('end-to-end encrypted push devices', 'user', each((user) => user.pushDevices?.length ?? 0), fixed(MAX_PUSH_DEVICES)),
    most('navigation views', 'user', each((user) => user.navigationViews?.length ?? 0), configured('navigationViewsPerUser')),
  ];
}

/** Of a kind bounded per user or per message, the one holding the most (`counts`: id -> count); count 0 if none. */
function most(what: string, holder: 'user' | 'message', counts: Iterable<readonly [number, number]>, bound: Bound): Excess {
  let worst: Excess = { what, count: 0, ...bound };
  for (const [id, count] of counts) if (count > worst.count) worst = { what, count, ...bound, holder: `${holder} ${id}` };
  return worst;
}
