import { Packr } from 'msgpackr';

/**
 * Every persisted record carries this version. Bump it when a record's shape changes and teach
 * `upgradeRecord` (in the reader) how to read the older shape, so a newer server opens an older data directory.
 */
export const FORMAT_VERSION = 1;

// Records are plain data (arrays and objects); Maps are turned into arrays by each actor's record codec, so
// that the stored shape is explicit and does not depend on msgpackr extension types.
const packr = new Packr({ useRecords: false, variableMapSize: true });

export function encode(value: unknown): Buffer {
  return packr.pack(value);
}

export function decode<T>(bytes: Uint8Array): T {
  return packr.unpack(bytes) as T;
}
