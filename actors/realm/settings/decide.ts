import { badRequest, ChatError, ErrorCode } from '../../errors.ts';
import { LANGUAGES } from '../../user/setting-values.ts';
import type { GroupSetting } from '../groups/state.ts';
import type { RealmPermission } from '../permissions.ts';
import { Role, type RealmState } from '../state.ts';
import type { RealmSettingsChange } from './changes.ts';
import type { RealmSettingsCommand } from './commands.ts';
import { requireAdmin } from '../administer.ts';
import {
  EDIT_HISTORY_POLICIES,
  GIF_RATINGS,
  MAX_WELCOME_MESSAGE_LENGTH,
  ORG_TYPES,
  OWNER_ONLY_SETTINGS,
  TOPICS_POLICIES,
  VIDEO_CHAT_PROVIDERS,
  type RealmSettingName,
  type RealmSettings,
} from './state.ts';

export const MODERATION_CHANNEL_PUBLIC = 'Moderation request channel must be private.';

/** The original's limits on an organization's name and description. */
export const MAX_REALM_NAME_LENGTH = 40;
export const MAX_REALM_DESCRIPTION_LENGTH = 1000;

/** Permissions that only a system group may hold, and which ones (the original's `allowed_system_groups`). */
export const SYSTEM_GROUPS_ONLY: Partial<Record<RealmPermission, readonly string[]>> = {
  can_access_all_users_group: ['role:everyone', 'role:members'],
};

type Property = Extract<RealmSettingsChange, { type: 'realm.property_changed' }>;
type Value = Property['value'];

/**
 * PATCH /realm: administrators, and owners for the owner-only settings. Every value is checked before
 * anything changes; values equal to the current ones change nothing and announce nothing.
 */
export function decideRealmSettings(state: RealmState, command: RealmSettingsCommand): RealmSettingsChange[] {
  const caller = requireAdmin(state, command.caller);
  const touched = [...Object.keys(command.settings), ...Object.keys(command.permissions)];
  if (caller && caller.role !== Role.owner && touched.some((name) => OWNER_ONLY_SETTINGS.has(name))) {
    throw new ChatError(ErrorCode.UNAUTHORIZED_PRINCIPAL, 'Must be an organization owner');
  }
  const changes: RealmSettingsChange[] = [];
  const property = (name: Property['name'], value: Value, current: Value) => {
    if (value !== current) changes.push({ type: 'realm.property_changed', name, value });
  };
  if (command.name !== undefined) property('name', checkName(command.name), state.name);
  if (command.description !== undefined) {
    if (command.description.length > MAX_REALM_DESCRIPTION_LENGTH) {
      throw badRequest(`description is too long (limit: ${MAX_REALM_DESCRIPTION_LENGTH} characters)`);
    }
    property('description', command.description, state.description);
  }
  for (const [name, value] of Object.entries(command.settings) as [RealmSettingName, RealmSettings[RealmSettingName]][]) {
    if (value === undefined) continue;
    property(name, checkSetting(state, name, value), state.settings[name]);
  }
  for (const [name, edit] of Object.entries(command.permissions) as [RealmPermission, { new: GroupSetting; old?: GroupSetting }][]) {
    if (!edit) continue;
    if (edit.old !== undefined && !sameSetting(edit.old, state.permissions[name])) {
      throw badRequest("'old' value does not match the expected value.");
    }
    const value = checkPermission(state, name, edit.new);
    if (!sameSetting(value, state.permissions[name])) changes.push({ type: 'realm.permission_changed', name, value });
  }
  return changes;
}

function checkName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed) throw badRequest("Organization name can't be empty.");
  if (trimmed.length > MAX_REALM_NAME_LENGTH) throw badRequest(`name is too long (limit: ${MAX_REALM_NAME_LENGTH} characters)`);
  return trimmed;
}

const badValue = (name: string, value: unknown) => badRequest(`Bad value for '${name}': ${value === null ? 'null' : String(value)}`);
const positive = (value: unknown) => typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
const oneOf = (name: string, value: unknown, allowed: readonly unknown[]) => {
  if (!allowed.includes(value)) throw badValue(name, value);
  return value as number | string;
};
const idsOf = (options: Record<string, { id: number }>) => Object.values(options).map((option) => option.id);
/** The original's limits on a code block language name and a Jitsi server's URL. */
const MAX_LANGUAGE_NAME_LENGTH = 50;
const MAX_URL_LENGTH = 200;

function checkSetting(state: RealmState, name: RealmSettingName, value: unknown): Value {
  switch (name) {
    case 'allow_message_editing':
    case 'enable_spectator_access':
    case 'avatar_changes_disabled':
    case 'digest_emails_enabled':
    case 'disallow_disposable_email_addresses':
    case 'email_changes_disabled':
    case 'name_changes_disabled':
    case 'invite_required':
    case 'inline_image_preview':
    case 'inline_url_embed_preview':
    case 'require_unique_names':
    case 'emails_restricted_to_domains':
    case 'send_welcome_emails':
    case 'message_content_allowed_in_email_notifications':
    case 'want_advertise_in_communities_directory':
    case 'enable_read_receipts':
    case 'enable_guest_user_dm_warning':
    case 'enable_guest_user_indicator':
    case 'require_e2ee_push_notifications':
      if (typeof value !== 'boolean') throw badValue(name, value);
      return value;
    case 'message_content_edit_limit_seconds':
    case 'move_messages_within_stream_limit_seconds':
    case 'move_messages_between_streams_limit_seconds':
    case 'message_content_delete_limit_seconds':
      // null is "no limit"; zero is not a limit (it meant "no limit" before feature level 138).
      if (value !== null && !positive(value)) throw badValue(name, value);
      return value as number | null;
    case 'message_retention_days':
      if (value !== -1 && !positive(value)) throw badValue(name, value);
      return value as number;
    case 'topics_policy':
      if (!TOPICS_POLICIES.includes(value as never)) throw badRequest(`Invalid topics_policy '${String(value)}'`);
      return value as string;
    case 'waiting_period_threshold':
      if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw badValue(name, value);
      return value;
    case 'digest_weekday':
      return oneOf(name, value, [0, 1, 2, 3, 4, 5, 6]);
    case 'message_edit_history_visibility_policy':
      return oneOf(name, value, EDIT_HISTORY_POLICIES);
    case 'video_chat_provider':
      return oneOf(name, value, idsOf(VIDEO_CHAT_PROVIDERS));
    case 'giphy_rating':
      return oneOf(name, value, idsOf(GIF_RATINGS));
    case 'org_type':
      return oneOf(name, value, ORG_TYPES);
    case 'jitsi_server_url':
      if (value === null) return null;
      if (typeof value !== 'string' || value.length > MAX_URL_LENGTH || !/^https?:\/\/[^\s/]+/.test(value)) throw badRequest(`${String(value)} is not an allowed_type`);
      return value.replace(/\/+$/, '');
    case 'default_code_block_language':
      if (typeof value !== 'string' || value.length > MAX_LANGUAGE_NAME_LENGTH) throw badValue(name, value);
      return value;
    case 'welcome_message_custom_text':
      if (typeof value !== 'string') throw badValue(name, value);
      if (value.length > MAX_WELCOME_MESSAGE_LENGTH) throw badRequest(`welcome_message_custom_text is too long (limit: ${MAX_WELCOME_MESSAGE_LENGTH} characters)`);
      return value;
    case 'default_language':
      if (typeof value !== 'string' || !LANGUAGES.has(value)) throw badRequest(`Invalid language '${String(value)}'`);
      return value;
    case 'new_stream_announcements_stream_id':
    case 'signup_announcements_stream_id':
    case 'moderation_request_channel_id':
    case 'zulip_update_announcements_stream_id': {
      // -1 is "none"; otherwise a channel that can still take messages.
      if (value === -1) return value;
      const channel = typeof value === 'number' ? state.channels.get(value) : undefined;
      if (!channel || channel.isArchived) throw badRequest('Invalid channel ID');
      // Reports quote messages of any channel: only a private channel may receive them.
      if (name === 'moderation_request_channel_id' && !channel.inviteOnly) throw badRequest(MODERATION_CHANNEL_PUBLIC);
      return value as number;
    }
  }
}

/** A valid value for a realm permission, in its canonical form. */
function checkPermission(state: RealmState, name: RealmPermission, value: GroupSetting): GroupSetting {
  const systemOnly = SYSTEM_GROUPS_ONLY[name];
  const groupOf = (id: number) => {
    const group = state.groups.get(id);
    if (!group || group.deactivated) throw badRequest(`Invalid user group ID: ${id}`);
    // Nobody outside the organization holds a permission in it.
    if (group.name === 'role:internet' && group.isSystemGroup) throw badRequest(`'${name}' setting cannot be set to 'role:internet' group.`);
    return group;
  };
  const normalized = normalize(value);
  if (typeof normalized === 'number') {
    const group = groupOf(normalized);
    if (systemOnly && !(group.isSystemGroup && systemOnly.includes(group.name))) throw badRequest(`'${name}' must be a system user group.`);
    return normalized;
  }
  if (systemOnly) throw badRequest(`'${name}' must be a system user group.`);
  for (const id of normalized.direct_members) {
    const user = state.users.get(id);
    if (!user || !user.isActive) throw badRequest(`Invalid user ID: ${id}`);
  }
  for (const id of normalized.direct_subgroups) groupOf(id);
  return normalized;
}

/** Sorted, without repeats; an anonymous group of exactly one group is that group. */
function normalize(value: GroupSetting): GroupSetting {
  if (typeof value === 'number') return value;
  const sorted = (ids: number[]) => [...new Set(ids)].sort((a, b) => a - b);
  const direct_members = sorted(value.direct_members);
  const direct_subgroups = sorted(value.direct_subgroups);
  if (direct_members.length === 0 && direct_subgroups.length === 1) return direct_subgroups[0]!;
  return { direct_members, direct_subgroups };
}

function sameSetting(first: GroupSetting, second: GroupSetting): boolean {
  const [a, b] = [normalize(first), normalize(second)];
  if (typeof a === 'number' || typeof b === 'number') return a === b;
  return a.direct_members.join(',') === b.direct_members.join(',') && a.direct_subgroups.join(',') === b.direct_subgroups.join(',');
}
