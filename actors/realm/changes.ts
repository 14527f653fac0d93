import type { SettingOverrides } from '../user/settings.ts';
import type { AttachmentChange } from './attachments/changes.ts';
import type { AvatarChange } from './avatars/changes.ts';
import type { BotChange } from './bots/changes.ts';
import type { ChannelChange } from './channels/changes.ts';
import type { EmojiChange } from './emoji/changes.ts';
import type { GroupChange } from './groups/changes.ts';
import type { LinkifierChange } from './linkifiers/changes.ts';
import type { InvitationChange } from './invitations/changes.ts';
import type { MessageChange } from './messages/changes.ts';
import type { NotificationChange } from './notifications/changes.ts';
import type { PlaygroundChange } from './playgrounds/changes.ts';
import type { ChannelFolderChange } from './channel-folders/changes.ts';
import type { RealmDomainChange } from './domains/changes.ts';
import type { DefaultChannelGroupChange } from './default-channel-groups/changes.ts';
import type { ProfileFieldChange } from './profile-fields/changes.ts';
import type { RealmSettingsChange } from './settings/changes.ts';
import type { SettingsDefaultsChange } from './settings-defaults/changes.ts';
import type { Role, UserProfile } from './state.ts';
import type { SubmessageChange } from './submessages/changes.ts';
import type { RealmExportChange } from './exports/changes.ts';

/** Facts about a realm, with every server-chosen value filled in. `applyRealmChange` is the only reader. */
export type RealmChange =
  | { type: 'realm.created'; realmId: number; stringId: string; name: string; at: number }
  | { type: 'realm.deactivated' }
  /** `settings`: the realm's defaults for new users at that moment, which the user's own settings start from */
  | { type: 'user.created'; user: UserProfile; settings?: SettingOverrides }
  | { type: 'user.deactivated'; userId: number }
  | { type: 'user.reactivated'; userId: number }
  /** `previousFullName` with `fullName`: what a default avatar's initials were (absent in records written before avatars) */
  | { type: 'user.updated'; userId: number; fullName?: string; previousFullName?: string; role?: Role; timezone?: string }
  | { type: 'user.api_key_changed'; userId: number; apiKey: string }
  | { type: 'user.password_changed'; userId: number; passwordHash: string }
  /** a confirmed email change: the address the user logs in with and is known by */
  | { type: 'user.email_changed'; userId: number; email: string }
  /** who may read the user's real address; `previous`: the value before, for who gains or loses it */
  | { type: 'user.email_visibility_changed'; userId: number; visibility: number; previous: number }
  | GroupChange
  | SettingsDefaultsChange
  | ChannelChange
  | MessageChange
  | RealmSettingsChange
  | ProfileFieldChange
  | BotChange
  | NotificationChange
  | AttachmentChange
  | EmojiChange
  | LinkifierChange
  | PlaygroundChange
  | ChannelFolderChange
  | RealmDomainChange
  | DefaultChannelGroupChange
  | AvatarChange
  | InvitationChange
  | SubmessageChange
  | RealmExportChange;
