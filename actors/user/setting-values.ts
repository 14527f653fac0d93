/**
 * The value lists some user settings are checked against: the original server's languages, notification
 * sounds and emoji sets. They are data, kept apart from the settings table that refers to them.
 */

/** Language codes with their English names (`language_name` of a `default_language` settings event). */
export const LANGUAGES: ReadonlyMap<string, string> = new Map([
  ['ar', 'Arabic'],
  ['be', 'Belarusian'],
  ['bg', 'Bulgarian'],
  ['bn', 'Bengali'],
  ['ca', 'Catalan'],
  ['cs', 'Czech'],
  ['cy', 'Welsh'],
  ['da', 'Danish'],
  ['de', 'German'],
  ['el', 'Greek'],
  ['en', 'English'],
  ['en-gb', 'British English'],
  ['eo', 'Esperanto'],
  ['es', 'Spanish'],
  ['fa', 'Persian'],
  ['fi', 'Finnish'],
  ['fr', 'French'],
  ['gl', 'Galician'],
  ['gu', 'Gujarati'],
  ['hi', 'Hindi'],
  ['hu', 'Hungarian'],
  ['id', 'Indonesian'],
  ['it', 'Italian'],
  ['ja', 'Japanese'],
  ['ko', 'Korean'],
  ['lt', 'Lithuanian'],
  ['lv', 'Latvian'],
  ['ml', 'Malayalam'],
  ['mn', 'Mongolian'],
  ['nl', 'Dutch'],
  ['no', 'Norwegian'],
  ['pl', 'Polish'],
  ['pt', 'Portuguese'],
  ['pt-br', 'Brazilian Portuguese'],
  ['pt-pt', 'European Portuguese'],
  ['ro', 'Romanian'],
  ['ru', 'Russian'],
  ['si', 'Sinhala'],
  ['sr', 'Serbian'],
  ['sv', 'Swedish'],
  ['ta', 'Tamil'],
  ['te', 'Telugu'],
  ['tl', 'Tagalog'],
  ['tr', 'Turkish'],
  ['uk', 'Ukrainian'],
  ['uz', 'Uzbek'],
  ['vi', 'Vietnamese'],
  ['zh-hans', 'Simplified Chinese'],
  ['zh-hant', 'Traditional Chinese'],
]);

/** The sound files the original server ships, sorted, as `available_notification_sounds` lists them. */
export const NOTIFICATION_SOUNDS: readonly string[] = [
  'ascend', 'beep_boop', 'bink', 'bright', 'brlip', 'chime', 'deep tom', 'ding', 'double tap', 'down',
  'dry bongos', 'dutdut', 'fast ascend', 'flute', 'friendly', 'kick roll', 'loud tintong', 'metallic snare',
  'pan', 'practicechat', 'shaker', 'simple', 'stairs', 'subtle', 'swish', 'tintong', 'up', 'wood block',
  'zaping', 'zing', 'zulip',
];

/** `none` turns the sound off; it is accepted though it is not a file. */
export const NOTIFICATION_SOUND_VALUES: readonly string[] = [...NOTIFICATION_SOUNDS, 'none'];

/**
 * The emoji sets, in the original's order. The spec withholds the vendor-named keys; clients know them by
 * these keys, so the server keeps them.
 */
export const EMOJISET_CHOICES: readonly { key: string; text: string }[] = [
  { key: 'google', text: 'Google' },
  { key: 'twitter', text: 'Twitter' },
  { key: 'text', text: 'Plain text' },
  { key: 'google-blob', text: 'Google blobs' },
];

/** An IANA time-zone name the runtime knows (aliases such as `Asia/Calcutta` included), or '' for unset. */
export function isTimeZone(name: string): boolean {
  if (name === '') return true;
  // Offsets such as "+05:30" are valid for Intl but are not time-zone names.
  if (!/^[A-Za-z][A-Za-z0-9_+\-]*(\/[A-Za-z0-9_+\-]+)*$/.test(name)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}
