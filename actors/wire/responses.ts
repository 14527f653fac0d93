import type { paths } from './openapi.generated.ts';

/** The envelope every success carries, which the front end adds (src/http/envelope.ts): not an answer's own keys. */
type Envelope = 'result' | 'msg' | 'ignored_parameters_unsupported';

type Methods<P extends keyof paths> = { [M in keyof paths[P]]: paths[P][M] extends { responses: unknown } ? M : never }[keyof paths[P]];
type Json200<Op> = Op extends { responses: { 200: { content: { 'application/json': infer J } } } } ? J : never;
type WithoutEnvelope<J> = J extends unknown ? Omit<J, Envelope> : never;

/**
 * The success answer of one operation as the document types it (openapi.generated.ts, neutral names applied),
 * less the envelope: a handler's answer `satisfies WireResponse<'/messages', 'get'>` makes a missing key or a
 * wrong shape a compile error. Type-level only.
 */
export type WireResponse<P extends keyof paths, M extends Methods<P>> = WithoutEnvelope<Json200<paths[P][M]>>;
