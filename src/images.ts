/**
 * What kind of image an uploaded file is, told from its bytes (never from the name or the type the client
 * declared), and for an animated GIF or PNG a still of its first frame. No pixels are decoded: the still
 * is the file cut after its first frame, which every viewer shows as a plain image.
 */

export interface ImageInfo {
  extension: 'png' | 'gif' | 'jpg' | 'webp' | 'avif';
  contentType: string;
  animated: boolean;
  /** the first frame alone, for an animated GIF or PNG; null otherwise (and for animated WebP and AVIF) */
  still: Buffer | null;
}

/** The image's kind, or null when the bytes are not an image of a kind this server takes. */
export function inspectImage(data: Buffer): ImageInfo | null {
  if (data.subarray(0, 8).equals(PNG_SIGNATURE)) return inspectPng(data);
  const head = data.subarray(0, 6).toString('latin1');
  if (head === 'GIF87a' || head === 'GIF89a') return inspectGif(data);
  if (data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return { extension: 'jpg', contentType: 'image/jpeg', animated: false, still: null };
  if (data.subarray(0, 4).toString('latin1') === 'RIFF' && data.subarray(8, 12).toString('latin1') === 'WEBP') {
    // An extended WebP (VP8X) says in its flags whether it is animated.
    const animated = data.subarray(12, 16).toString('latin1') === 'VP8X' && ((data[20] ?? 0) & 0x02) !== 0;
    return { extension: 'webp', contentType: 'image/webp', animated, still: null };
  }
  if (data.subarray(4, 8).toString('latin1') === 'ftyp') {
    const brand = data.subarray(8, 12).toString('latin1');
    if (brand === 'avif' || brand === 'avis') return { extension: 'avif', contentType: 'image/avif', animated: brand === 'avis', still: null };
  }
  return null;
}

/** Content types by the extensions inspectImage gives, for serving the files. */
export const IMAGE_TYPES: Readonly<Record<string, string>> = { png: 'image/png', gif: 'image/gif', jpg: 'image/jpeg', webp: 'image/webp', avif: 'image/avif' };

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** An animated PNG (APNG) has an `acTL` chunk; without it and its frame chunks, it is its default image. */
function inspectPng(data: Buffer): ImageInfo | null {
  const kept: Buffer[] = [PNG_SIGNATURE];
  let animated = false;
  let sawImage = false;
  for (let at = 8; at < data.length; ) {
    if (at + 12 > data.length) return null;
    const length = data.readUInt32BE(at);
    const type = data.subarray(at + 4, at + 8).toString('latin1');
    const end = at + 12 + length;
    if (end > data.length) return null;
    if (at === 8 && type !== 'IHDR') return null;
    if (type === 'acTL') animated = true;
    if (type === 'IDAT') sawImage = true;
    if (type !== 'acTL' && type !== 'fcTL' && type !== 'fdAT') kept.push(data.subarray(at, end));
    at = end;
    if (type === 'IEND') break;
  }
  if (!sawImage) return null;
  return { extension: 'png', contentType: 'image/png', animated, still: animated ? Buffer.concat(kept) : null };
}

/** A GIF of more than one frame is animated; its still is the file up to the end of the first frame. */
function inspectGif(data: Buffer): ImageInfo | null {
  const colorTable = (packed: number) => ((packed & 0x80) !== 0 ? 3 * 2 ** ((packed & 0x07) + 1) : 0);
  const skipSubBlocks = (from: number): number => {
    let at = from;
    while (at < data.length && data[at] !== 0) at += data[at]! + 1;
    return at + 1;
  };
  let at = 13 + colorTable(data[10] ?? 0);
  let frames = 0;
  let firstFrameEnd = 0;
  while (at < data.length && data[at] !== 0x3b) {
    if (data[at] === 0x21) at = skipSubBlocks(at + 2);
    else if (data[at] === 0x2c) {
      at = skipSubBlocks(at + 10 + colorTable(data[at + 9] ?? 0) + 1);
      frames++;
      if (frames === 1) firstFrameEnd = at;
    } else break;
    if (at > data.length) break;
  }
  // A first frame cut short is not an image a browser can show.
  if (frames === 0 || firstFrameEnd > data.length) return null;
  const animated = frames > 1;
  const still = animated ? Buffer.concat([data.subarray(0, firstFrameEnd), Buffer.from([0x3b])]) : null;
  return { extension: 'gif', contentType: 'image/gif', animated, still };
}
