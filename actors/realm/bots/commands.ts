import type { Caller } from '../commands.ts';

export type BotCommand =
  | {
      type: 'bot.create';
      caller: Caller;
      fullName: string;
      shortName: string;
      botType: number;
      /** the domain of bot emails, `<short_name>-bot@<domain>` (the realm's host, which the front end knows) */
      domain: string;
      serviceName?: string;
      payloadUrl?: string;
      interfaceType?: number;
      /** channel names; '' or absent: none */
      defaultSendingStream?: string;
      defaultEventsRegisterStream?: string;
      defaultAllPublicStreams?: boolean;
      /** how many active bots one person may own (the server's setting) */
      maxBotsPerOwner: number;
    }
  | {
      type: 'bot.update';
      caller: Caller;
      botId: number;
      fullName?: string;
      ownerId?: number;
      /** a channel name; null or '' clears it */
      defaultSendingStream?: string | null;
      defaultEventsRegisterStream?: string | null;
      defaultAllPublicStreams?: boolean;
      servicePayloadUrl?: string;
      serviceInterface?: number;
      /** how many active bots one person may own (the server's setting): a new owner is held to it too */
      maxBotsPerOwner: number;
    }
  | { type: 'bot.deactivate'; caller: Caller; botId: number }
  | { type: 'bot.regenerate_api_key'; caller: Caller; botId: number };
