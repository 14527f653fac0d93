import type { AttachmentCommand } from './attachments/commands.ts';
import type { AvatarCommand } from './avatars/commands.ts';
import type { BotCommand } from './bots/commands.ts';
import type { ChannelCommand } from './channels/commands.ts';
import type { EmojiCommand } from './emoji/commands.ts';
import type { GroupCommand } from './groups/commands.ts';
import type { LinkifierCommand } from './linkifiers/commands.ts';
import type { InvitationCommand } from './invitations/commands.ts';
import type { MessageCommand } from './messages/commands.ts';
import type { PlaygroundCommand } from './playgrounds/commands.ts';
import type { ChannelFolderCommand } from './channel-folders/commands.ts';
import type { RealmDomainCommand } from './domains/commands.ts';
import type { ReminderCommand } from './notifications/reminders.ts';
import type { WelcomeCommand } from './notifications/welcome.ts';
import type { DefaultChannelGroupCommand } from './default-channel-groups/commands.ts';
import type { ReportCommand } from './notifications/report.ts';
import type { ProfileFieldCommand } from './profile-fields/commands.ts';
import type { RealmSettingsCommand } from './settings/commands.ts';
import type { SettingsDefaultsCommand } from './settings-defaults/commands.ts';
import type { Role } from './state.ts';
import type { SubmessageCommand } from './submessages/commands.ts';
import type { RealmExportCommand } from './exports/commands.ts';

/** Who asks: a user of the realm, or the operator through the command line. */
export type Caller = { kind: 'user'; userId: number } | { kind: 'operator' };

export type RealmCommand =
  | {
      type: 'user.create';
      caller: Caller;
      email: string;
      fullName: string;
      /** hashed by the front end before the command is sent; decide() stays synchronous */
      passwordHash: string | null;
      role?: Role;
      canCreateUsers?: boolean;
      canChangeUserEmails?: boolean;
    }
  | { type: 'user.deactivate'; caller: Caller; userId: number }
  /** the organization closes: nobody may log in or use the API any more */
  | { type: 'realm.deactivate'; caller: Caller }
  /** DELETE /users/me: a user leaves on its own, which needs no administrator */
  | { type: 'user.deactivate_own'; userId: number }
  | { type: 'user.reactivate'; caller: Caller; userId: number }
  | { type: 'user.update'; caller: Caller; userId: number; fullName?: string; role?: Role; timezone?: string }
  | { type: 'user.regenerate_api_key'; caller: Caller; userId: number }
  /** a user's own password change (PATCH /settings); the front end verified the old one and hashed the new */
  | { type: 'user.change_password'; caller: Caller; userId: number; passwordHash: string }
  /** the user followed the confirmation link of an email change (the front end checked its key) */
  /** `administered`: PATCH /users/{id} `new_email`, not a user's own confirmed change */
  | { type: 'user.change_email'; caller: Caller; userId: number; email: string; administered?: true }
  /** a user's own `email_address_visibility` (PATCH /settings; the user actor keeps the setting too) */
  | { type: 'user.set_email_visibility'; userId: number; visibility: number }
  | GroupCommand
  | SettingsDefaultsCommand
  | ChannelCommand
  | MessageCommand
  | ReportCommand
  | RealmSettingsCommand
  | ProfileFieldCommand
  | BotCommand
  | AttachmentCommand
  | EmojiCommand
  | LinkifierCommand
  | PlaygroundCommand
  | ChannelFolderCommand
  | RealmDomainCommand
  | ReminderCommand
  | WelcomeCommand
  | DefaultChannelGroupCommand
  | AvatarCommand
  | InvitationCommand
  | SubmessageCommand
  | RealmExportCommand;
