import type { BotService } from './state.ts';

/** A bot's configuration changed (creation, deactivation and keys are the user changes of any account). */
export type BotChange = {
  type: 'bot.updated';
  userId: number;
  fullName?: string;
  ownerId?: number;
  /** the owner before an ownership change: it stops administering the bot */
  previousOwnerId?: number | null;
  defaultSendingChannelId?: number | null;
  defaultEventsRegisterChannelId?: number | null;
  defaultAllPublicStreams?: boolean;
  services?: BotService[];
};
