import type { MarkdownIt, StateCore, Token } from 'markdown-it';
import { linkifyText } from '../linkifiers/linkify.ts';
import type { RealmState } from '../state.ts';

/**
 * The realm's linkifiers, as a Markdown core rule: runs after markdown-it's own linkify, over plain text
 * outside links and code. Escaped characters (`\#123`) stay their own tokens, so, as in the original, an
 * escape keeps its text from being linked.
 */
export function useLinkifiers(md: MarkdownIt): void {
  md.core.ruler.after('linkify', 'zulip_linkifiers', (state: StateCore) => {
    const realm = (state.env as { realm?: RealmState }).realm;
    const linkifiers = realm?.linkifiers.compiled ?? [];
    if (linkifiers.length === 0) return;
    for (const block of state.tokens) {
      if (block.type === 'inline' && block.children) block.children = linkifyChildren(md, state, block.children, linkifiers);
    }
  });
}

function linkifyChildren(md: MarkdownIt, state: StateCore, children: Token[], linkifiers: RealmState['linkifiers']['compiled']): Token[] {
  const out: Token[] = [];
  let insideLink = 0;
  // A run of text starts a text (for a pattern's `^`, or the start that may precede a match) at the start,
  // after a line break and inside an opening tag (`**#12**`), as in the original; after a closing tag, not.
  let atTextStart = true;
  for (const token of children) {
    if (token.type === 'link_open') insideLink++;
    if (token.type === 'link_close') insideLink--;
    const pieces = token.type === 'text' && insideLink === 0 ? linkifyText(linkifiers, token.content, atTextStart) : null;
    atTextStart = token.type === 'softbreak' || token.type === 'hardbreak' || token.nesting === 1;
    if (!pieces) {
      out.push(token);
      continue;
    }
    for (const piece of pieces) {
      const url = piece.url === undefined ? null : md.normalizeLink(piece.url);
      if (url === null || !md.validateLink(url)) {
        out.push(textToken(state, piece.text, token.level));
        continue;
      }
      const open = new state.Token('link_open', 'a', 1);
      open.attrs = [['href', url]];
      open.level = token.level;
      const close = new state.Token('link_close', 'a', -1);
      close.level = token.level;
      out.push(open, textToken(state, piece.text, token.level + 1), close);
    }
  }
  return out;
}

function textToken(state: StateCore, content: string, level: number): Token {
  const token = new state.Token('text', '', 0);
  token.content = content;
  token.level = level;
  return token;
}
