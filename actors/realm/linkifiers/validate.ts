import { badRequest } from '../../errors.ts';
import { delimited, RESERVED_GROUP_NAMES } from './pattern.ts';
import { compileRe2, Re2SyntaxError } from './re2.ts';
import type { LinkifierStore } from './state.ts';
import { parseUriTemplate } from './template.ts';

/** The original has none; every registration carries every linkifier, and RE2 compiles the pattern. */
export const MAX_LINKIFIER_TEXT_LENGTH = 2000;

/**
 * Checks a linkifier as the original's model validation does, collecting each field's problems; the error
 * names the first and carries them all in `errors` (field -> messages, `__all__` for the pair), which the
 * original's settings page shows beside each field. Returns the pattern and template trimmed.
 */
export function checkLinkifier(store: LinkifierStore, pattern: string, urlTemplate: string, self: number | null): { pattern: string; urlTemplate: string } {
  const trimmed = { pattern: pattern.trim(), urlTemplate: urlTemplate.trim() };
  const errors: Record<string, string[]> = {};
  const add = (field: string, message: string) => (errors[field] ??= []).push(message);
  const refuse = () => badRequest(Object.values(errors)[0]![0]!, { errors });
  if (!trimmed.pattern) add('pattern', 'This field cannot be blank.');
  if (!trimmed.urlTemplate) add('url_template', 'This field cannot be blank.');
  const tooLong = ([['pattern', trimmed.pattern], ['url_template', trimmed.urlTemplate]] as const).filter(([, text]) => text.length > MAX_LINKIFIER_TEXT_LENGTH);
  for (const [field, text] of tooLong) add(field, `Ensure this value has at most ${MAX_LINKIFIER_TEXT_LENGTH} characters (it has ${text.length}).`);
  // Nothing that long is parsed or compiled.
  if (tooLong.length) throw refuse();
  const template = parseUriTemplate(trimmed.urlTemplate);
  if (!template) add('url_template', 'Invalid URL template.');
  const parsed = parsePattern(trimmed.pattern);
  if (typeof parsed === 'string') add('__all__', parsed);
  else if (template) {
    // The template's variables and the pattern's groups must be the same names; the first missing is named.
    const unknown = [...template.names].filter((name) => !parsed.includes(name)).sort();
    const unused = parsed.filter((name) => !template.names.has(name)).sort();
    if (unknown.length) add('__all__', `Group '${unknown[0]}' in URL template is not present in linkifier pattern.`);
    else if (unused.length) add('__all__', `Group '${unused[0]}' in linkifier pattern is not present in URL template.`);
  }
  if (!errors.pattern && store.list.some((linkifier) => linkifier.pattern === trimmed.pattern && linkifier.id !== self)) {
    add('__all__', 'Realm filter with this Realm and Pattern already exists.');
  }
  if (Object.keys(errors).length) throw refuse();
  return trimmed;
}

/**
 * The pattern's group names, or what is wrong with it, worded as the original's ("Bad regular expression:
 * ..." and RE2's own text). The pattern is checked alone, as the original's model validation does, then
 * inside the delimiters it runs in.
 */
function parsePattern(pattern: string): string[] | string {
  try {
    const { names } = compileRe2(pattern);
    const reserved = RESERVED_GROUP_NAMES.find((name) => names.includes(name));
    if (reserved) return `Bad regular expression: duplicate capture group name: ${reserved}`;
    compileRe2(pattern, delimited);
    return names;
  } catch (error) {
    if (error instanceof Re2SyntaxError) return `Bad regular expression: ${error.message}`;
    throw error;
  }
}
