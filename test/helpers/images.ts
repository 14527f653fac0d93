import { crc32, deflateSync } from 'node:zlib';

/** Small real image files for upload tests, built byte by byte. */

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** A 1x1 RGBA pixel of this color. */
const header = () => pngChunk('IHDR', Buffer.from([0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0]));
const pixel = (rgba: number[]) => deflateSync(Buffer.from([0, ...rgba]));

/** A one-pixel PNG. */
export function png(rgba = [0, 128, 0, 255]): Buffer {
  return Buffer.concat([PNG_SIGNATURE, header(), pngChunk('IDAT', pixel(rgba)), pngChunk('IEND', Buffer.alloc(0))]);
}

/** A one-pixel animated PNG of two frames. */
export function apng(): Buffer {
  const frameControl = (sequence: number) => {
    const data = Buffer.alloc(26);
    data.writeUInt32BE(sequence, 0);
    data.writeUInt32BE(1, 4);
    data.writeUInt32BE(1, 8);
    data.writeUInt16BE(1, 20);
    data.writeUInt16BE(10, 22);
    return pngChunk('fcTL', data);
  };
  const animation = Buffer.alloc(8);
  animation.writeUInt32BE(2, 0);
  const sequenced = Buffer.concat([Buffer.from([0, 0, 0, 2]), pixel([255, 0, 0, 255])]);
  return Buffer.concat([
    PNG_SIGNATURE, header(), pngChunk('acTL', animation), frameControl(0), pngChunk('IDAT', pixel([0, 0, 255, 255])),
    frameControl(1), pngChunk('fdAT', sequenced), pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

const GIF_FRAME = [0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0x02, 0x02, 0x44, 0x01, 0x00];

/** A one-pixel GIF of `frames` frames (animated when more than one). */
export function gif(frames = 1): Buffer {
  const head = [...Buffer.from('GIF89a', 'latin1'), 1, 0, 1, 0, 0x80, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff];
  // The looping extension animated GIFs carry, then a frame delay before each frame.
  const loop = frames > 1 ? [0x21, 0xff, 0x0b, ...Buffer.from('NETSCAPE2.0', 'latin1'), 0x03, 0x01, 0x00, 0x00, 0x00] : [];
  const body = Array.from({ length: frames }, () => [0x21, 0xf9, 0x04, 0x00, 0x0a, 0x00, 0x00, 0x00, ...GIF_FRAME]).flat();
  return Buffer.from([...head, ...loop, ...body, 0x3b]);
}
