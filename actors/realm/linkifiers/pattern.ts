import { compileRegex, type Program } from './regex/program.ts';
import { search } from './regex/search.ts';
import { parseRegex, type CharTest, type Node, type Parsed } from './regex/syntax.ts';
import type { Linkifier } from './state.ts';
import { expandUriTemplate, parseUriTemplate, type UriTemplate } from './template.ts';

/** A linkifier ready to run: its pattern inside the original's delimiters, compiled, and its template. */
export interface CompiledLinkifier {
  id: number;
  program: Program;
  template: UriTemplate;
  /** the pattern's named groups and their numbers, for the template */
  groups: [string, number][];
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
// The original matches the characters around; here they are assertions, so that the match is the linked
// text and a search skips straight to where the pattern's first character is.
const classOf = (source: string): CharTest => (parseRegex(source).root as Extract<Node, { kind: 'char' }>).test;
const BEFORE = classOf(`[\\s\\x{85}\\pZ'"(,:<]`);
const AFTER = classOf('[^\\pL\\pN]');

/** The pattern between its delimiters. */
export function delimited(pattern: Parsed): Parsed {
  const root: Node = {
    kind: 'concat',
    items: [{ kind: 'assert', what: { precededBy: BEFORE } }, pattern.root, { kind: 'assert', what: { followedBy: AFTER } }],
  };
  return { ...pattern, root };
}

/** Compiles a stored linkifier; null if it no longer compiles (it was checked when it was stored). */
export function compileLinkifier(linkifier: Linkifier): CompiledLinkifier | null {
  const template = parseUriTemplate(linkifier.urlTemplate);
  if (!template) return null;
  try {
    const program = compileRegex(delimited(parseRegex(linkifier.pattern)));
    return { id: linkifier.id, program, template, groups: [...program.names] };
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
    const start = slots[0]!;
    const end = slots[1]!;
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
