import type { UserProfile } from '../state.ts';

/** The realm's notification bot came to be (notifications/state.ts). */
export type NotificationChange = { type: 'notification_bot.created'; bot: UserProfile };
