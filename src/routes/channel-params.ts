import { z } from 'zod';
import { badRequest } from '../../actors/errors.ts';
import { CHANNEL_PERMISSIONS, CHANNEL_TOPICS_POLICIES, type ChannelPermission } from '../../actors/realm/channels/state.ts';
import type { GroupSetting } from '../../actors/realm/groups/state.ts';
import { p, Param, type ParamsOf } from '../http/params.ts';
import type { NewChannelOptions } from '../../actors/realm/channels/commands.ts';

const ids = z.array(z.number().int());
export const groupSetting: z.ZodType<GroupSetting> = z.union([z.number().int(), z.object({ direct_members: ids, direct_subgroups: ids })]);

/** The channel permissions as optional parameters, each holding `schema`. */
export function channelPermissionParams<T>(schema: z.ZodType<T>): Record<ChannelPermission, Param<T, true>> {
  return Object.fromEntries(CHANNEL_PERMISSIONS.map((name) => [name, p.json(schema).optional()])) as Record<ChannelPermission, Param<T, true>>;
}

export function pickChannelPermissions<T>(params: Partial<Record<ChannelPermission, T | undefined>>): Partial<Record<ChannelPermission, T>> {
  const out: Partial<Record<ChannelPermission, T>> = {};
  for (const name of CHANNEL_PERMISSIONS) if (params[name] !== undefined) out[name] = params[name];
  return out;
}

/** `message_retention_days`: a number of days, `realm_default` (null) or `unlimited` (-1). */
export const retentionDays = p.text(
  z.string().transform((text, context): number | null => {
    const value = text.replace(/^"|"$/g, '');
    if (value === 'realm_default') return null;
    if (value === 'unlimited') return -1;
    if (/^\d+$/.test(value) && Number(value) > 0) return Number(value);
    context.addIssue({ code: 'custom', message: "must be a positive number of days, 'realm_default' or 'unlimited'" });
    return z.NEVER;
  }),
);

/** `topics_policy`: a channel's, plainly or as a JSON string. */
export const topicsPolicy = Param.of((raw: string) => raw.trim().replace(/^"(.*)"$/, '$1'), z.enum(CHANNEL_TOPICS_POLICIES));

/** `folder_id`: a channel folder's id, or null for none. */
export const folderId = p.json(z.number().int().nullable());

/** `principals`: user ids (preferred) or API emails; an unknown or deactivated one is a 400 BAD_REQUEST. */
export const principals = p.json(z.union([z.array(z.number().int()), z.array(z.string())]));

/** None given: the caller (the actor resolves them, channels/principals.ts). */
export const principalsOrSelf = (given: number[] | string[] | undefined, self: number): readonly (number | string)[] => (given?.length ? given : [self]);

/** The parameters that shape a new channel, shared by POST /users/me/subscriptions and /channels/create. */
export const newChannelParams = {
  announce: p.bool().default(false),
  invite_only: p.bool().default(false),
  is_web_public: p.bool().default(false),
  is_default_stream: p.bool().default(false),
  history_public_to_subscribers: p.bool().optional(),
  message_retention_days: retentionDays.optional(),
  folder_id: folderId.optional(),
  topics_policy: topicsPolicy.optional(),
  ...channelPermissionParams(groupSetting),
};

/** `webPublicEnabled`: the server's switch for web-public channels (config); the realm has its own. */
export function newChannelOptions(params: ParamsOf<typeof newChannelParams>, webPublicEnabled: boolean): NewChannelOptions {
  checkWebPublicEnabled(params.is_web_public, webPublicEnabled);
  return {
    inviteOnly: params.invite_only,
    isWebPublic: params.is_web_public,
    historyPublicToSubscribers: params.history_public_to_subscribers,
    messageRetentionDays: params.message_retention_days ?? null,
    isDefault: params.is_default_stream,
    permissions: pickChannelPermissions(params),
    folderId: params.folder_id,
    topicsPolicy: params.topics_policy,
    announce: params.announce,
  };
}

/** A channel can be made web-public only on a server that allows web-public channels at all. */
export function checkWebPublicEnabled(isWebPublic: boolean | undefined, webPublicEnabled: boolean): void {
  if (isWebPublic && !webPublicEnabled) throw badRequest('Web-public channels are not enabled.');
}
