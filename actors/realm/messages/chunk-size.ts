/**
 * Snapshots store a realm's messages in chunks of this many consecutive ids, one record each (chunks.ts),
 * so that a snapshot re-encodes only the chunks changed since the last one, and a chunk not in memory is read
 * back as one small record (paged.ts). About 250 KB encoded for messages of 100 characters: rewriting or
 * decoding one takes a few milliseconds.
 */
export const MESSAGE_CHUNK_SIZE = 2000;

export const chunkOf = (messageId: number) => Math.floor(messageId / MESSAGE_CHUNK_SIZE);
