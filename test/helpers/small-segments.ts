/**
 * Imported first by a test file: its message indexes are kept in segments of 2^8 ids (lazy-map.ts reads
 * CHAT_MESSAGE_SEGMENT_BITS once, when first imported), so that a history of a few thousand messages spans
 * several segments. The server's default stays 2^17.
 */
export const SMALL_SEGMENT_BITS = 8;
process.env.CHAT_MESSAGE_SEGMENT_BITS = String(SMALL_SEGMENT_BITS);
