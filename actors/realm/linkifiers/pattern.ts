import { compileRegex, type Program } from './regex/program.ts';
import { search } from './regex/search.ts';
import { parseRegex, type Node, type Parsed } from './regex/syntax.ts';
import type { Linkifier } from './state.ts';
import { expandUriTemplate, parseUriTemplate, type UriTemplate } from './template.ts';

/** A linkifier ready to run: its pattern inside the original's delimiters, compiled, and its template. */
export interface CompiledLinkifier {
  id: number;
  program: Program;
  template: UriTemplate;
  /** the pattern's named groups and their numbers, for the template */
  groups: [string, number][];
  /** the number of the group holding the text that becomes the link */
  linkGroup: number;
}

/** One place a linkifier matched: the linked text (UTF-16 offsets) and where it leads. */
export interface LinkifierMatch {
  start: number;
  end: number;
  url: string;
}

/** The names of the original's delimiter groups, which a pattern cannot use. */
export const RESERVED_GROUP_NAMES = ['linkifier_before_match', 'linkifier_actual_match', 'linkifier_after_match'];

// A linkifier matches only after the start of the text, whitespace (the Unicode kinds too: RE2's \s is
// ASCII only, so NEL and \pZ are named) or an opening delimiter, and not right before a letter or digit.
const BEFORE = parseRegex(`^|\\s|\\x{85}|\\pZ|['"\\(,:<]`).root;
const AFTER = parseRegex('$|[^\\pL\\pN]').root;

/** The pattern inside its delimiters, as groups 1 (before), 2 (the link text, holding the pattern's groups) and last (after). */
export function delimited(pattern: Parsed): Parsed {
  const after = pattern.groups + 1;
  const root: Node = {
    kind: 'concat',
    items: [
      { kind: 'group', capture: 1, body: BEFORE },
      { kind: 'group', capture: 2, body: pattern.root },
      { kind: 'group', capture: after, body: AFTER },
    ],
  };
  return { root, groups: after, names: pattern.names };
}

/** Compiles a stored linkifier; null if it no longer compiles (it was checked when it was stored). */
export function compileLinkifier(linkifier: Linkifier): CompiledLinkifier | null {
  const template = parseUriTemplate(linkifier.urlTemplate);
  if (!template) return null;
  try {
    const program = compileRegex(delimited(parseRegex(linkifier.pattern, 2)));
    return { id: linkifier.id, program, template, groups: [...program.names], linkGroup: 2 };
  } catch {
    return null;
  }
}

/**
 * Every match of one linkifier in the text, left to right, as the original finds them: each search starts
 * where the last linked text ended (the character after it may delimit the next match).
 */
export function matchesOf(linkifier: CompiledLinkifier, text: string, atTextStart: boolean): LinkifierMatch[] {
  const out: LinkifierMatch[] = [];
  for (let from = 0; from < text.length; ) {
    const slots = search(linkifier.program, text, from, { atTextStart });
    if (!slots) break;
    const start = slots[linkifier.linkGroup * 2]!;
    const end = slots[linkifier.linkGroup * 2 + 1]!;
    // A pattern that can match nothing (`x?`) would find the same empty match forever.
    from = end > from ? end : from + 1;
    if (end === start) continue;
    const values: Record<string, string | undefined> = {};
    for (const [name, group] of linkifier.groups) {
      const groupStart = slots[group * 2]!;
      values[name] = groupStart < 0 ? undefined : text.slice(groupStart, slots[group * 2 + 1]);
    }
    out.push({ start, end, url: expandUriTemplate(linkifier.template, values) });
  }
  return out;
}
