/**
 * The send path's shortcut past markdown-it: most messages are a line or a few of words, with perhaps a
 * `**strong**` run, and markdown-it spends several microseconds parsing such text into tokens to give back
 * one paragraph. This recognizes that narrow shape and writes the paragraph itself; anything else (and anything
 * it is unsure of) is left to the full renderer, which must give the very same bytes
 * (test/actors/render-plain.test.ts compares the two on generated inputs).
 */

/**
 * Characters at which markdown-it or Zulip's syntax may start something (markdown-it's text rule stops at
 * each of them: rules_inline/text.mjs); `*` and `:` are handled below, the rest send the content to the full
 * renderer. `"` is not among them: the text renderer escapes it.
 */
const SPECIAL = new Set([...'!#$%&*+-:<=>@[\\]^_`{}~'].map((char) => char.charCodeAt(0)));

const SPACE = 0x20;
const NEWLINE = 0x0a;
const STAR = 0x2a;
const COLON = 0x3a;
const QUOTE = 0x22;
const LINE_START = /^\p{L}/u;

/** A `**strong**` run's opener may follow the start, a space or `(` (never a right-flanking delimiter). */
const OPENER_BEFORE = new Set([SPACE, 0x28]);
/** Its closer may be followed by the end, a space or `,.;?)` (never a left-flanking delimiter). */
const CLOSER_AFTER = new Set([SPACE, 0x2c, 0x2e, 0x3b, 0x3f, 0x29]);

/**
 * The HTML for a paragraph of text (no character markdown-it or Zulip's syntax acts on; `:` only before a
 * space, which starts neither an emoji nor a link) and `**strong**` runs of ASCII letters, digits and inner
 * spaces; null for anything else. Each line starts with a letter (a digit may start a list, a space is
 * dropped) and ends without whitespace (markdown-it drops it, or makes a blank line of it); a line break is
 * `<br>` (`breaks`). Linkify's fuzzy links (`example.com`) and the realm's linkifiers are the caller's to
 * rule out.
 */
export function plainParagraph(content: string): string | null {
  if (!LINE_START.test(content) || /\s$/.test(content)) return null;
  let html = '<p>';
  let from = 0;
  for (let at = 0; at < content.length; at++) {
    const code = content.charCodeAt(at);
    if (code === NEWLINE) {
      if (/\s/.test(content[at - 1]!) || !LINE_START.test(content.slice(at + 1, at + 3))) return null;
      html += `${content.slice(from, at)}<br>\n`;
      from = at + 1;
    } else if (code < SPACE || code === 0x7f) {
      return null;
    } else if (code === QUOTE) {
      html += content.slice(from, at) + '&quot;';
      from = at + 1;
    } else if (code === COLON) {
      if (content.charCodeAt(at + 1) !== SPACE) return null;
    } else if (code === STAR) {
      const end = strongEnd(content, at);
      if (end < 0) return null;
      html += `${content.slice(from, at)}<strong>${content.slice(at + 2, end)}</strong>`;
      at = end + 1;
      from = end + 2;
    } else if (SPECIAL.has(code)) {
      return null;
    }
  }
  return `${html}${content.slice(from)}</p>`;
}

/** Where the closing `**` of a strong run opening at `at` starts, or -1 if this is not one. */
function strongEnd(content: string, at: number): number {
  if (content.charCodeAt(at + 1) !== STAR || (at > 0 && !OPENER_BEFORE.has(content.charCodeAt(at - 1)))) return -1;
  let end = at + 2;
  while (end < content.length && isWordOrSpace(content.charCodeAt(end))) end++;
  if (end === at + 2 || content.charCodeAt(at + 2) === SPACE || content.charCodeAt(end - 1) === SPACE) return -1;
  if (content.charCodeAt(end) !== STAR || content.charCodeAt(end + 1) !== STAR) return -1;
  const after = end + 2;
  return after === content.length || CLOSER_AFTER.has(content.charCodeAt(after)) ? end : -1;
}

function isWordOrSpace(code: number): boolean {
  return code === SPACE || (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a);
}
