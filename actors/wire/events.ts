import type { components } from './openapi.generated.ts';

type Schemas = components['schemas'];

/** Every variant of GET /events' union, as the document types it (openapi.generated.ts, neutral names applied). */
export type WireEvent = Schemas['get_events_200_response_allOf_events_inner'];

// A variant's type and op, read through the optional keys of the variants the document writes with `allOf`.
type TypeOf<V> = V extends { type?: infer X } ? NonNullable<X> : never;
type OpOf<V> = V extends { op?: infer X } ? NonNullable<X> : never;
type Select<V, T, Op> = V extends unknown ? (TypeOf<V> extends T ? (unknown extends Op ? V : OpOf<V> extends Op ? V : never) : never) : never;
type WithoutId<V> = V extends unknown ? Omit<V, 'id'> : never;

/** The event types of the union. */
export type WireEventType = TypeOf<WireEvent>;

/**
 * The variant(s) of one event type (and op) as a builder makes it: without `id`, which its queue adds. Building
 * an event `satisfies` this makes a missing key or a wrong shape a compile error.
 */
export type WireEventOf<T extends WireEventType, Op = unknown> = WithoutId<Select<WireEvent, T, Op>>;

/** The document's object schemas by name, for the parts of events and answers built apart. */
export type WireSchema<Name extends keyof Schemas> = Schemas[Name];

/** POST /register's answer as the document types it (every key optional: each comes with its fetch type). */
export type WireRegister = Schemas['register_queue_200_response'];

/** The keys a registration builder makes, each required: `satisfies WireRegisterKeys<...>` checks their shapes. */
export type WireRegisterKeys<K extends keyof WireRegister> = Required<Pick<WireRegister, K>>;

/** A union of the document's partial objects (a `realm_user` update's `person`, ...) less a key the builder adds. */
export type PartialWithout<U, K extends PropertyKey> = U extends unknown ? Omit<U, K> : never;
