import { matchesOf, type CompiledLinkifier } from './pattern.ts';

/** Plain text, or text that links to `url`. */
export type Piece = { text: string; url?: string };

/**
 * Splits message text into plain and linked pieces. Linkifiers apply in order, as the original's Markdown
 * applies them: each takes its matches, and the next ones look only at the text left between them (where
 * the start of a gap after a link is not the start of the text). Null when nothing is linked.
 */
export function linkifyText(linkifiers: readonly CompiledLinkifier[], text: string, atTextStart: boolean): Piece[] | null {
  if (linkifiers.length === 0 || text === '') return null;
  const pieces: Piece[] = [];
  split(linkifiers, 0, text, atTextStart, pieces);
  return pieces.some((piece) => piece.url !== undefined) ? pieces : null;
}

function split(linkifiers: readonly CompiledLinkifier[], index: number, text: string, atTextStart: boolean, out: Piece[]): void {
  if (text === '') return;
  const linkifier = linkifiers[index];
  if (!linkifier) {
    out.push({ text });
    return;
  }
  let at = 0;
  let gapAtStart = atTextStart;
  for (const match of matchesOf(linkifier, text, atTextStart)) {
    split(linkifiers, index + 1, text.slice(at, match.start), gapAtStart, out);
    out.push({ text: text.slice(match.start, match.end), url: match.url });
    at = match.end;
    gapAtStart = false;
  }
  split(linkifiers, index + 1, text.slice(at), gapAtStart, out);
}
