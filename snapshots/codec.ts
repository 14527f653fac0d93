import { Packr } from 'msgpackr';

/**
 * Every persisted record carries this version. Bump it when a record's shape changes and teach
 * `upgradeRecord` (in the reader) how to read the older shape, so a newer server opens an older data directory.
 */
export const FORMAT_VERSION = 6;
// 1: a realm's snapshot record holds its messages. 2: it holds the message store's counters (messageHead) and
// its messages and flags are in records of their own, one per chunk of ids (actors/realm/snapshot.ts); log
// records are unchanged. A server of format 1 refuses a directory of format 2 rather than lose its messages.
// 3: message bodies (content, rendering, edit history) are stored one per message in the `bodies` database,
// written with the snapshot; chunk records no longer carry them. A chunk of format 2 is read (its bodies
// kept in memory until the next snapshot stores them apart); a server of format 2 refuses format 3.
// 4: each chunk has an index record beside it (its ids, senders, timestamps, recipients, mentions and flags,
// actors/realm/messages/chunks.ts), which a boot reads instead of the chunks; chunk records no longer carry
// flags. A snapshot of format 3 is read whole and written again with its index records; a server of format 3
// refuses format 4 (it would find no flags).
// 5: a realm's channel, topic and conversation indexes, its users' flags and mentions are stored per key, in
// segments of 2^17 ids (actors/realm/messages/lazy-map.ts, realm/snapshot.ts MESSAGE_KEY_KIND), and the
// realm record's messageHead lists the keys: a boot reads neither chunk nor index record, each key is read
// when first asked for, a chunk's columns (index record, no longer holding flags or mentions) likewise. A
// snapshot of format 4 is read as before and written again whole; a server of format 4 refuses format 5.
// 6: a realm's subscriptions are stored per channel (realm/snapshot.ts CHANNEL_SUBSCRIPTIONS_KIND), written
// when the channel's subscriptions change, and the realm record holds none (`subscriptionsApart`). A realm record of format 5
// is read as before, its subscriptions written per channel by the boot's snapshot; a server of format 5
// refuses format 6 (it would find no subscriptions).


// Records are plain data (arrays and objects); Maps are turned into arrays by each actor's record codec, so
// that the stored shape is explicit and does not depend on msgpackr extension types.
const packr = new Packr({ useRecords: false, variableMapSize: true });

export function encode(value: unknown): Buffer {
  return packr.pack(value);
}

export function decode<T>(bytes: Uint8Array): T {
  return packr.unpack(bytes) as T;
}

/**
 * The value encoded in `bytes` from `start` to `end`: one of many values packed one after the other, read
 * without a view of its own (msgpackr keeps one DataView per buffer, made on its first read).
 */
export function decodeRange<T>(bytes: Uint8Array, start: number, end: number): T {
  return packr.unpack(bytes, { start, end }) as T;
}
