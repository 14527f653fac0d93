import type RE2 from 're2';
import { compileRe2 } from './re2.ts';
import type { Linkifier } from './state.ts';
import { expandUriTemplate, parseUriTemplate, type UriTemplate } from './template.ts';

/** A linkifier ready to run: its pattern inside the original's delimiters, compiled, and its template. */
export interface CompiledLinkifier {
  id: number;
  regex: RE2;
  template: UriTemplate;
}

/** One place a linkifier matched: the linked text (UTF-16 offsets) and where it leads. */
export interface LinkifierMatch {
  start: number;
  end: number;
  url: string;
}

/** The names of the original's delimiter groups, which a pattern cannot use. */
export const RESERVED_GROUP_NAMES = ['linkifier_before_match', 'linkifier_actual_match', 'linkifier_after_match'];

/**
 * The original's delimiters (its `prepare_linkifier_pattern`): a linkifier matches only after the start of the
 * text, whitespace (the Unicode kinds too: RE2's \s is ASCII only, so NEL and \pZ are named) or an opening
 * delimiter, and not right before a letter or digit. Group 1 is the delimiter before (empty at the start, one
 * UTF-16 unit otherwise), group 2 the linked text; the character after is matched but not kept.
 */
export const delimited = (source: string) => `(^|[\\s\\x{85}\\pZ'"\\(,:<])(${source})(?:$|[^\\pL\\pN])`;

/**
 * Put before a piece of a text that is not its start (a run of plain text after Markdown markup), and searched
 * from after: neither a delimiter nor a line end, so that `^`, `\A`, `(?m)^` and the delimiter's start of text
 * do not hold at the piece's start. (The original's Markdown leaves its own placeholder characters, \x02 and
 * \x03, around markup.)
 */
const NOT_A_START = '\x03';

/** Compiles a stored linkifier; null if it no longer compiles (it was checked when it was stored). */
export function compileLinkifier(linkifier: Linkifier): CompiledLinkifier | null {
  const template = parseUriTemplate(linkifier.urlTemplate);
  if (!template) return null;
  try {
    return { id: linkifier.id, regex: compileRe2(linkifier.pattern, delimited).regex, template };
  } catch {
    return null;
  }
}

/**
 * Every match of one linkifier in the text, left to right, as the original finds them: each search starts
 * where the last linked text ended (the character after it may delimit the next match), and RE2 sees the
 * text before a search's start only as context, so it can be no match's delimiter.
 */
export function matchesOf(linkifier: CompiledLinkifier, text: string, atTextStart: boolean): LinkifierMatch[] {
  const out: LinkifierMatch[] = [];
  const shift = atTextStart ? 0 : NOT_A_START.length;
  const input = atTextStart ? text : NOT_A_START + text;
  const { regex } = linkifier;
  for (let from = shift; from < input.length; ) {
    regex.lastIndex = from;
    const match = regex.exec(input);
    if (!match) break;
    // The binding gives offsets in UTF-16 units and the groups' text; the linked text follows its delimiter.
    const start = match.index + match[1]!.length;
    const end = start + match[2]!.length;
    // A pattern that can match nothing (`x?`) would find the same empty match forever; a step over a
    // character, not into a surrogate pair, moves on.
    from = end > from ? end : from + (isPairAt(input, from) ? 2 : 1);
    if (end === start) continue;
    out.push({ start: start - shift, end: end - shift, url: expandUriTemplate(linkifier.template, match.groups ?? {}) });
  }
  return out;
}

function isPairAt(text: string, at: number): boolean {
  const high = text.charCodeAt(at);
  const low = text.charCodeAt(at + 1);
  return high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff;
}
