/**
 * The Unicode emoji this server knows by name: `:name:` in messages and reactions given by name only.
 * A small subset of the original's table (no emoji data package is installed); a reaction may still use
 * any emoji when the client sends its `emoji_code`.
 */
const EMOJI: Record<string, string> = {
  '+1': '1f44d', thumbs_up: '1f44d', '-1': '1f44e', thumbs_down: '1f44e', smile: '1f604', smiley: '1f603',
  grinning: '1f600', joy: '1f602', rolling_on_the_floor_laughing: '1f923', slight_smile: '1f642', wink: '1f609',
  blush: '1f60a', heart_eyes: '1f60d', thinking: '1f914', neutral: '1f610', expressionless: '1f611',
  confused: '1f615', cry: '1f622', sob: '1f62d', angry: '1f620', scream: '1f631', sunglasses: '1f60e',
  upside_down: '1f643', sweat_smile: '1f605', innocent: '1f607', relieved: '1f60c', sleeping: '1f634',
  heart: '2764', broken_heart: '1f494', star: '2b50', sparkles: '2728', fire: '1f525', tada: '1f389',
  clap: '1f44f', wave: '1f44b', pray: '1f64f', muscle: '1f4aa', ok: '1f197', check: '2705',
  check_mark: '2714', cross_mark: '274c', warning: '26a0', question: '2753', exclamation: '2757',
  eyes: '1f440', rocket: '1f680', coffee: '2615', beer: '1f37a', pizza: '1f355', cake: '1f370',
  octopus: '1f419', cat: '1f408', dog: '1f415', bug: '1f41b', sun: '2600', cloud: '2601', zap: '26a1',
  hundred: '1f4af', '100': '1f4af', working_on_it: '1f6e0', time_ticking: '23f3', calendar: '1f4c6',
  bulb: '1f4a1', lock: '1f512', key: '1f511', link: '1f517', book: '1f4d6', memo: '1f4dd', gift: '1f381',
  party_popper: '1f389', green_heart: '1f49a', blue_heart: '1f499', purple_heart: '1f49c', point_up: '261d',
  raised_hands: '1f64c', handshake: '1f91d', laughing: '1f606', slightly_frowning_face: '1f641',
};

/** Each known code with its names (the registration's `server_emoji_data_url` serves it). */
export function emojiCodeToNames(): Record<string, string[]> {
  const names: Record<string, string[]> = {};
  for (const [name, code] of Object.entries(EMOJI)) (names[code] ??= []).push(name);
  return names;
}

/** The longest emoji name, custom or in a reaction (the original's names are far shorter). */
export const MAX_EMOJI_NAME_LENGTH = 100;

export function emojiCodeOf(name: string): string | undefined {
  return Object.hasOwn(EMOJI, name) ? EMOJI[name] : undefined;
}

/** Is the code a dash-separated list of hex code points (the `unicode_emoji` namespace)? */
export const isUnicodeEmojiCode = (code: string) => /^[0-9a-f]{2,6}(-[0-9a-f]{2,6})*$/.test(code);
