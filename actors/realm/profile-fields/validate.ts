import { badRequest } from '../../errors.ts';
import type { RealmState } from '../state.ts';
import { FieldType, type ProfileField } from './state.ts';

/** The original's caps on text values. */
export const MAX_SHORT_TEXT_LENGTH = 50;
export const MAX_LONG_TEXT_LENGTH = 500;

/** External accounts that come with their label, help text and link. */
export const DEFAULT_EXTERNAL_ACCOUNTS: Readonly<Record<string, { name: string; hint: string; url_pattern: string }>> = {
  twitter: { name: 'Twitter', hint: 'Enter your Twitter username', url_pattern: 'https://twitter.com/%(username)s' },
  github: { name: 'GitHub', hint: 'Enter your GitHub username', url_pattern: 'https://github.com/%(username)s' },
};

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The field data a type keeps: a list's options, an external account's subtype (and link pattern); null otherwise. */
export function checkFieldData(type: FieldType, data: unknown): Record<string, unknown> | null {
  if (type === FieldType.select) return checkOptions(data);
  if (type === FieldType.externalAccount) return checkExternalAccount(data);
  return null;
}

/** `{key: {text, order}}`, at least one option, no two with the same text. */
function checkOptions(data: unknown): Record<string, unknown> {
  if (!isObject(data)) throw badRequest('field_data is not a dict');
  if (Object.keys(data).length < 1) throw badRequest('Field must have at least one choice.');
  const texts = new Set<string>();
  for (const [key, option] of Object.entries(data)) {
    if (!key.trim()) throw badRequest("'value' cannot be blank.");
    const where = `field_data["${key}"]`;
    if (!isObject(option)) throw badRequest(`${where} is not a dict`);
    for (const name of ['text', 'order']) {
      if (!(name in option)) throw badRequest(`${name} key is missing from ${where}`);
      if (typeof option[name] !== 'string') throw badRequest(`${where}["${name}"] is not a string`);
      if (!(option[name] as string).trim()) throw badRequest(`${where}["${name}"] cannot be blank.`);
    }
    const unexpected = Object.keys(option).filter((name) => name !== 'text' && name !== 'order');
    if (unexpected.length) throw badRequest(`Unexpected arguments: ${unexpected.join(', ')}`);
    texts.add(option.text as string);
  }
  if (texts.size !== Object.keys(data).length) throw badRequest('Field must not have duplicate choices.');
  return data;
}

/** `{subtype}` naming a well-known account, or `{subtype: "custom", url_pattern}` with one %(username)s. */
function checkExternalAccount(data: unknown): Record<string, unknown> {
  if (!isObject(data)) throw badRequest('field_data is not a dict');
  if (!('subtype' in data)) throw badRequest('subtype key is missing from field_data');
  if (typeof data.subtype !== 'string' || !data.subtype.trim()) throw badRequest('field_data["subtype"] cannot be blank.');
  const unexpected = Object.keys(data).filter((name) => name !== 'subtype' && name !== 'url_pattern');
  if (unexpected.length) throw badRequest(`Unexpected arguments: ${unexpected.join(', ')}`);
  if ('url_pattern' in data) {
    const pattern = data.url_pattern;
    if (typeof pattern !== 'string' || pattern.split('%(username)s').length !== 2 || !isUrl(pattern.replace('%(username)s', 'username'))) {
      throw badRequest('Malformed URL pattern.');
    }
  }
  if (!DEFAULT_EXTERNAL_ACCOUNTS[data.subtype]) {
    if (data.subtype !== 'custom') throw badRequest('Invalid external account type');
    if (!('url_pattern' in data)) throw badRequest('Custom external account must define URL pattern');
  }
  return data;
}

function isUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return ['http:', 'https:', 'ftp:', 'ftps:'].includes(url.protocol) && url.hostname.length > 0;
  } catch {
    return false;
  }
}

/** A value for a field as stored: text, checked by the field's type (a person picker's as JSON text of ids). */
export function checkValue(state: RealmState, field: ProfileField, value: unknown): string {
  const name = field.name;
  if (field.type === FieldType.user) return JSON.stringify(checkUserIds(state, value));
  if (typeof value !== 'string') throw badRequest(`${name} is not a string`);
  switch (field.type) {
    case FieldType.shortText:
    case FieldType.externalAccount:
    case FieldType.pronouns:
      if (value.length > MAX_SHORT_TEXT_LENGTH) throw badRequest(`${name} is too long (limit: ${MAX_SHORT_TEXT_LENGTH} characters)`);
      return value;
    case FieldType.longText:
      if (value.length > MAX_LONG_TEXT_LENGTH) throw badRequest(`${name} is too long (limit: ${MAX_LONG_TEXT_LENGTH} characters)`);
      return value;
    case FieldType.date:
      if (!isDate(value)) throw badRequest(`${name} is not a date`);
      return value;
    case FieldType.url:
      if (!isUrl(value)) throw badRequest(`${name} is not a URL`);
      return value;
    case FieldType.select:
      if (!Object.hasOwn(field.fieldData ?? {}, value)) throw badRequest(`'${value}' is not a valid choice for '${name}'.`);
      return value;
  }
}

/** YYYY-MM-DD naming a real day. */
function isDate(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const date = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === text;
}

/** A person picker names active human users of the realm. */
function checkUserIds(state: RealmState, value: unknown): number[] {
  if (!Array.isArray(value)) throw badRequest('User IDs is not a list');
  value.forEach((id, i) => {
    if (typeof id !== 'number' || !Number.isSafeInteger(id)) throw badRequest(`User IDs[${i}] is not an integer`);
    const user = state.users.get(id);
    if (!user) throw badRequest(`Invalid user ID: ${id}`);
    if (!user.isActive) throw badRequest(`User with ID ${id} is deactivated`);
    if (user.isBot) throw badRequest(`User with ID ${id} is a bot`);
  });
  return value as number[];
}
