import MarkdownIt from 'markdown-it';
import { matchesOf } from '../linkifiers/pattern.ts';
import type { RealmState } from '../state.ts';

export interface TopicLink {
  text: string;
  url: string;
}

interface Candidate extends TopicLink {
  index: number;
  /** the linkifier's place in the order; bare URLs come after every linkifier */
  precedence: number;
}

// Bare URLs are looked for in the pieces of the topic between these characters, as the original does.
const URL_SPLITTER = /[ !;),'"]/;
/** A topic without either has no bare URL to look for. */
const HAS_URL_MARK = /[.:]/;
const WEB_SCHEMES = new Set(['', 'http:', 'https:', 'ftp:']);
// The original links a bare domain in a topic (`example.com/x`); addresses are not links there.
const urlFinder = new MarkdownIt().linkify.set({ fuzzyLink: true, fuzzyEmail: false });

/** Shared by the topics without links: frozen, as nothing may change it. */
const NO_LINKS: TopicLink[] = Object.freeze([]) as unknown as TopicLink[];

/**
 * A topic's `topic_links`, as the original computes them: every linkifier's matches in the whole topic, and
 * bare URLs; where two overlap, the earlier linkifier (then a linkifier over a URL, then the leftmost) wins.
 * The URLs are not HTML-escaped: clients escape them where they show them.
 */
export function topicLinks(state: RealmState, topic: string): TopicLink[] {
  // Most topics of a realm without linkifiers: nothing to build (a GET /messages asks for each message's).
  if (state.linkifiers.compiled.length === 0 && !HAS_URL_MARK.test(topic)) return NO_LINKS;
  const candidates: Candidate[] = [];
  state.linkifiers.compiled.forEach((linkifier, precedence) => {
    for (const match of matchesOf(linkifier, topic, true)) {
      candidates.push({ text: topic.slice(match.start, match.end), url: match.url, index: match.start, precedence });
    }
  });
  candidates.sort((a, b) => a.precedence - b.precedence || a.index - b.index);
  if (HAS_URL_MARK.test(topic)) candidates.push(...bareUrls(topic, state.linkifiers.compiled.length));
  const chosen: Candidate[] = [];
  for (const candidate of candidates) {
    if (chosen.every((other) => !overlaps(candidate, other))) chosen.push(candidate);
  }
  return chosen.sort((a, b) => a.index - b.index).map(({ text, url }) => ({ text, url }));
}

function bareUrls(topic: string, precedence: number): Candidate[] {
  const out: Candidate[] = [];
  for (let at = 0; at < topic.length; ) {
    const split = URL_SPLITTER.exec(topic.slice(at));
    const end = split ? at + split.index : topic.length;
    const match = end > at ? urlFinder.match(topic.slice(at, end))?.[0] : undefined;
    if (match && match.index === 0 && WEB_SCHEMES.has(match.schema)) {
      // A URL written without its scheme opens over HTTPS.
      out.push({ text: match.raw, url: match.schema === '' ? `https://${match.raw}` : match.raw, index: at, precedence });
    }
    at = end + 1;
  }
  return out;
}

const overlaps = (a: Candidate, b: Candidate) =>
  (b.index <= a.index && a.index < b.index + b.text.length) || (a.index <= b.index && b.index < a.index + a.text.length);
