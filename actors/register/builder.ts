import type { PresenceStore } from '../presence/store.ts';
import type { RealmState, UserProfile } from '../realm/state.ts';
import type { UserState } from '../user/state.ts';

/** What the registration state is computed from: one consistent view of the realm and the user's actor. */
export interface RegistrationView {
  realm: RealmState;
  user: UserProfile;
  personal: UserState;
  /** the realm's presence (in memory, not part of the realm actor) */
  presence?: PresenceStore;
  /**
   * an anonymous visitor of a realm with public access: `user` is then a placeholder guest (register/
   * spectator.ts), and the state holds only what the Internet may read
   */
  spectator?: boolean;
  /** another user's personal state (their status), where the caller may see it */
  personalOf?: (userId: number) => UserState | undefined;
  /** how many changes the users' personal states have taken (registry.ts personalVersion); views of them all are kept until it moves */
  personalVersion?: number;
}

export interface InitialStateOptions {
  /** null: every type this server supports */
  fetchTypes: readonly string[] | null;
  clientExtavatar: boolean;
  includeSubscribers: boolean;
  /** the client capabilities the queue was registered with (absent: none) */
  capabilities?: Readonly<Record<string, boolean>>;
  /** presences keyed by user id in the modern format (register `slim_presence`) */
  slimPresence?: boolean;
  /** register `presence_history_limit_days` (absent: the default, 14) */
  presenceHistoryLimitDays?: number;
  /** UNIX ms when the state is taken */
  now: number;
  realmUrl: string;
  /** the server's switch for web-public channels (config) */
  webPublicStreamsEnabled: boolean;
  generation: number;
  /** the server's GIF service key and Jitsi server (config) */
  gifApiKey: string;
  jitsiServerUrl: string;
  passwordLimits: { minLength: number; maxLength: number; minGuesses: number };
  /** bytes of files the organization may keep (config); null: no limit */
  realmUploadQuotaBytes: number | null;
}

/**
 * A key's value given as JSON text already, in parts one after another (a list serialized once and shared by
 * many registrations): initial-state.ts passes the texts on instead of serializing the value.
 */
export class SerializedValue<T> {
  declare readonly value?: T;
  constructor(readonly parts: readonly string[]) {}
}

/** Builds the registration state of one fetch type (a value may be a SerializedValue). */
export type Builder = (view: RegistrationView, options: InitialStateOptions) => Record<string, unknown>;
