import { badRequest } from '../../errors.ts';
import { compileRegex } from './regex/program.ts';
import { parseRegex, RegexSyntaxError, type Parsed } from './regex/syntax.ts';
import { delimited, RESERVED_GROUP_NAMES } from './pattern.ts';
import type { LinkifierStore } from './state.ts';
import { parseUriTemplate } from './template.ts';

/**
 * Checks a linkifier as the original's model validation does, collecting each field's problems; the error
 * names the first and carries them all in `errors` (field -> messages, `__all__` for the pair), which the
 * original's settings page shows beside each field. Returns the pattern and template trimmed.
 */
export function checkLinkifier(store: LinkifierStore, pattern: string, urlTemplate: string, self: number | null): { pattern: string; urlTemplate: string } {
  const trimmed = { pattern: pattern.trim(), urlTemplate: urlTemplate.trim() };
  const errors: Record<string, string[]> = {};
  const add = (field: string, message: string) => (errors[field] ??= []).push(message);
  if (!trimmed.pattern) add('pattern', 'This field cannot be blank.');
  if (!trimmed.urlTemplate) add('url_template', 'This field cannot be blank.');
  const template = parseUriTemplate(trimmed.urlTemplate);
  if (!template) add('url_template', 'Invalid URL template.');
  const parsed = parsePattern(trimmed.pattern);
  if (typeof parsed === 'string') add('__all__', parsed);
  else if (template) {
    // The template's variables and the pattern's groups must be the same names; the first missing is named.
    const groups = [...parsed.names.keys()];
    const unknown = [...template.names].filter((name) => !parsed.names.has(name)).sort();
    const unused = groups.filter((name) => !template.names.has(name)).sort();
    if (unknown.length) add('__all__', `Group '${unknown[0]}' in URL template is not present in linkifier pattern.`);
    else if (unused.length) add('__all__', `Group '${unused[0]}' in linkifier pattern is not present in URL template.`);
  }
  if (!errors.pattern && store.list.some((linkifier) => linkifier.pattern === trimmed.pattern && linkifier.id !== self)) {
    add('__all__', 'Realm filter with this Realm and Pattern already exists.');
  }
  const first = Object.values(errors)[0]?.[0];
  if (first) throw badRequest(first, { errors });
  return trimmed;
}

/** The parsed pattern, or what is wrong with it, worded as the original's ("Bad regular expression: ..."). */
function parsePattern(pattern: string): Parsed | string {
  try {
    const parsed = parseRegex(pattern);
    const reserved = RESERVED_GROUP_NAMES.find((name) => parsed.names.has(name));
    if (reserved) return `Bad regular expression: duplicate capture group name: ${reserved}`;
    compileRegex(delimited(parsed));
    return parsed;
  } catch (error) {
    if (error instanceof RegexSyntaxError) return `Bad regular expression: ${error.message}`;
    throw error;
  }
}
