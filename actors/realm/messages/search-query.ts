/**
 * The `search` operand as Zulip reads it: words and "quoted phrases", all of which a message must hold
 * (in its content or its topic), words matched by their stem ("walking" finds "walked"), the last word also
 * as the start of a longer one (a search typed as far as "walk" finds "walkthrough"), when it starts at most
 * CHAT_SEARCH_PREFIX_TERMS of the index's terms (snapshots/search-prefix.ts); past that, as a word alone.
 * Zulip's own search (PostgreSQL's plainto_tsquery) matches every word as a word.
 */
export interface SearchTerms {
  /** what the results highlight, lowercased as typed (a phrase is one entry) */
  words: string[];
  /** the FTS5 expression; empty when no term has a letter or digit to look for */
  query: string;
}

const TERM = /"([^"]*)"|(\S+)/g;
const SEARCHABLE = /[\p{L}\p{N}]/u;

export function parseSearch(text: string): SearchTerms {
  const words: string[] = [];
  const parts: string[] = [];
  let lastIsWord = false;
  for (const match of text.matchAll(TERM)) {
    const phrase = match[1] !== undefined;
    const term = (phrase ? match[1]! : match[2]!.replace(/"/g, '')).trim().toLowerCase();
    if (!term) continue;
    words.push(term);
    lastIsWord = !phrase;
    if (SEARCHABLE.test(term)) parts.push(`"${term.replace(/"/g, '""')}"`);
  }
  if (lastIsWord && parts.length > 0 && SEARCHABLE.test(words[words.length - 1]!)) parts[parts.length - 1] += '*';
  return { words, query: parts.join(' AND ') };
}
