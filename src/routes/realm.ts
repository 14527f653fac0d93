import { z } from 'zod';
import { notAdmin } from '../../actors/errors.ts';
import { REALM_PERMISSION_DEFAULTS, type RealmPermission } from '../../actors/realm/permissions.ts';
import type { RealmSettings } from '../../actors/realm/settings/state.ts';
import { isAdmin } from '../../actors/realm/state.ts';
import { p, Param } from '../http/params.ts';
import { botDomain } from './bots.ts';
import { groupSetting } from './channel-params.ts';
import { changeOf } from './change-of.ts';
import { route } from './route.ts';
import type { WireResponse } from '../../actors/wire/responses.ts';

/** Text that clients send either plainly or as a JSON string. */
const unquote = (raw: string) => raw.trim().replace(/^"(.*)"$/, '$1');

/** A time limit in seconds: an integer, or `unlimited` (JSON null too) for none. The realm checks it is positive. */
const limitSeconds = Param.of(unquote, z.string().transform((text, context): number | null => {
  if (text === 'unlimited' || text === 'null') return null;
  if (/^-?\d+$/.test(text) && Number.isSafeInteger(Number(text))) return Number(text);
  context.addIssue({ code: 'custom', message: "must be a number of seconds or 'unlimited'" });
  return z.NEVER;
})).optional();

/** `message_retention_days`: a number of days, or `unlimited` (-1, the original's encoding). */
const retentionDays = Param.of(unquote, z.string().transform((text, context): number => {
  if (text === 'unlimited') return -1;
  if (/^-?\d+$/.test(text) && Number.isSafeInteger(Number(text))) return Number(text);
  context.addIssue({ code: 'custom', message: "must be a positive number of days or 'unlimited'" });
  return z.NEVER;
})).optional();

const BOOLEAN_SETTINGS = [
  'digest_emails_enabled', 'disallow_disposable_email_addresses', 'email_changes_disabled', 'name_changes_disabled', 'invite_required',
  'inline_image_preview', 'inline_url_embed_preview', 'require_unique_names', 'emails_restricted_to_domains', 'send_welcome_emails',
  'message_content_allowed_in_email_notifications', 'want_advertise_in_communities_directory', 'enable_read_receipts',
  'enable_guest_user_dm_warning', 'enable_guest_user_indicator', 'require_e2ee_push_notifications',
] as const satisfies readonly (keyof RealmSettings)[];
const INTEGER_SETTINGS = [
  'waiting_period_threshold', 'digest_weekday', 'video_chat_provider', 'giphy_rating', 'org_type', 'moderation_request_channel_id',
  'zulip_update_announcements_stream_id',
] as const satisfies readonly (keyof RealmSettings)[];
const TEXT_SETTINGS = ['message_edit_history_visibility_policy', 'default_code_block_language', 'welcome_message_custom_text'] as const satisfies readonly (keyof RealmSettings)[];
const simpleParams = {
  ...(Object.fromEntries(BOOLEAN_SETTINGS.map((name) => [name, p.bool().optional()])) as Record<(typeof BOOLEAN_SETTINGS)[number], Param<boolean, true>>),
  ...(Object.fromEntries(INTEGER_SETTINGS.map((name) => [name, p.int().optional()])) as Record<(typeof INTEGER_SETTINGS)[number], Param<number, true>>),
  ...(Object.fromEntries(TEXT_SETTINGS.map((name) => [name, Param.of(unquote, z.string()).optional()])) as Record<(typeof TEXT_SETTINGS)[number], Param<string, true>>),
};

/** `jitsi_server_url`: a URL, or `default` (JSON null too) for the server's. */
const jitsiUrl = Param.of(unquote, z.string().transform((text) => (text === 'default' || text === 'null' ? null : text))).optional();

const settingEdit = z.object({ new: groupSetting, old: groupSetting.optional() });
const PERMISSIONS = Object.keys(REALM_PERMISSION_DEFAULTS) as RealmPermission[];
const permissionParams = Object.fromEntries(PERMISSIONS.map((name) => [name, p.json(settingEdit).optional()])) as Record<
  RealmPermission,
  Param<z.infer<typeof settingEdit>, true>
>;

export const realmRoutes = [
  // Administrators change the realm's settings; owners also the owner-only ones (settings/state.ts).
  route({
    method: 'PATCH',
    path: '/realm',
    auth: 'user',
    authorize(user) {
      if (!isAdmin(user)) throw notAdmin();
    },
    params: {
      name: p.string().optional(),
      description: p.string().optional(),
      allow_message_editing: p.bool().optional(),
      message_content_edit_limit_seconds: limitSeconds,
      move_messages_within_stream_limit_seconds: limitSeconds,
      move_messages_between_streams_limit_seconds: limitSeconds,
      topics_policy: Param.of(unquote, z.string()).optional(),
      /** before topics_policy (feature level 392): true is `disable_empty_topic` */
      mandatory_topics: p.bool().optional(),
      default_language: Param.of(unquote, z.string()).optional(),
      message_retention_days: retentionDays,
      enable_spectator_access: p.bool().optional(),
      new_stream_announcements_stream_id: p.int().optional(),
      signup_announcements_stream_id: p.int().optional(),
      avatar_changes_disabled: p.bool().optional(),
      message_content_delete_limit_seconds: limitSeconds,
      jitsi_server_url: jitsiUrl,
      ...simpleParams,
      ...permissionParams,
    },
    async handle({ services, realm, user }, params) {
      const settings: Partial<RealmSettings> = {};
      const set = <K extends keyof RealmSettings>(name: K, value: RealmSettings[K] | undefined) => {
        if (value !== undefined) settings[name] = value;
      };
      set('allow_message_editing', params.allow_message_editing);
      set('message_content_edit_limit_seconds', params.message_content_edit_limit_seconds);
      set('move_messages_within_stream_limit_seconds', params.move_messages_within_stream_limit_seconds);
      set('move_messages_between_streams_limit_seconds', params.move_messages_between_streams_limit_seconds);
      if (params.mandatory_topics !== undefined) settings.topics_policy = params.mandatory_topics ? 'disable_empty_topic' : 'allow_empty_topic';
      set('topics_policy', params.topics_policy as RealmSettings['topics_policy'] | undefined);
      set('default_language', params.default_language);
      set('message_retention_days', params.message_retention_days);
      set('enable_spectator_access', params.enable_spectator_access);
      set('new_stream_announcements_stream_id', params.new_stream_announcements_stream_id);
      set('signup_announcements_stream_id', params.signup_announcements_stream_id);
      set('avatar_changes_disabled', params.avatar_changes_disabled);
      set('message_content_delete_limit_seconds', params.message_content_delete_limit_seconds);
      set('jitsi_server_url', params.jitsi_server_url);
      for (const name of BOOLEAN_SETTINGS) set(name, params[name]);
      for (const name of INTEGER_SETTINGS) set(name, params[name]);
      set('default_code_block_language', params.default_code_block_language);
      set('welcome_message_custom_text', params.welcome_message_custom_text);
      set('message_edit_history_visibility_policy', params.message_edit_history_visibility_policy as RealmSettings['message_edit_history_visibility_policy'] | undefined);
      const permissions: Partial<Record<RealmPermission, z.infer<typeof settingEdit>>> = {};
      for (const name of PERMISSIONS) if (params[name] !== undefined) permissions[name] = params[name];
      const changes = await services.runtime.execute(realm.realmId, {
        type: 'realm.update', caller: { kind: 'user', userId: user.userId }, name: params.name, description: params.description, settings, permissions,
        botDomain: botDomain(services, realm),
      });
      // The original answers with what changed: each new value, or 'updated' for text.
      const data: Record<string, unknown> = {};
      for (const change of changes) {
        if (change.type === 'realm.permission_changed') data[change.name] = change.value;
        else if (change.type === 'realm.property_changed') data[change.name] = typeof change.value === 'string' ? 'updated' : change.value;
      }
      return data;
    },
  }),

  // Owners close their organization; its clients are told, then every request of theirs is refused.
  route({
    method: 'POST',
    path: '/realm/deactivate',
    auth: 'user',
    params: {},
    async handle({ services, realm, user }) {
      await services.runtime.execute(realm.realmId, { type: 'realm.deactivate', caller: { kind: 'user', userId: user.userId } });
      return {};
    },
  }),

  // The notification bot stands in for the original's welcome bot (this server sends new users no welcome).
  route({
    method: 'POST',
    path: '/realm/test_welcome_bot_custom_message',
    auth: 'user',
    params: { welcome_message_custom_text: p.string() },
    async handle({ services, realm, user }, params) {
      const changes = await services.runtime.execute(realm.realmId, {
        type: 'welcome_message.test', caller: { kind: 'user', userId: user.userId }, text: params.welcome_message_custom_text, botDomain: botDomain(services, realm),
      });
      return { message_id: changeOf(changes, 'message.sent').message.id } satisfies WireResponse<'/realm/test_welcome_bot_custom_message', 'post'>;
    },
  }),
];
