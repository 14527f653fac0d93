/** An event as the API delivers it, before the queue gives it its `id`. */
export interface ApiEvent {
  type: string;
  [field: string]: unknown;
}

/** Who may receive an event: every user of the realm, or the listed users. */
export type Audience = { kind: 'realm' } | { kind: 'users'; userIds: readonly number[] };

export interface Delivery {
  realmId: number;
  audience: Audience;
  event: ApiEvent;
}
