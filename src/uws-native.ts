import { createRequire } from 'node:module';
import uWS from 'uWebSockets.js';

const require = createRequire(import.meta.url);

/**
 * The uWebSockets.js package falls back to a slow pure-JS server, with only a console warning, when its
 * native binary does not load (another Node ABI, another platform, UWS_USE_FALLBACK set). This tells which
 * one was loaded: the native addon is a `.node` file in the require cache, and it is the module we got.
 */
export function uwsBinary(): { native: boolean; file: string | null } {
  const prefix = require.resolve('uWebSockets.js').replace(/src[/\\]uws\.js$/, '');
  for (const [file, module] of Object.entries(require.cache)) {
    if (file.startsWith(prefix) && file.endsWith('.node') && module?.exports === uWS) return { native: true, file };
  }
  return { native: false, file: null };
}

export { uWS };
