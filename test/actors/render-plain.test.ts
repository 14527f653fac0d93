import t from 'tap';
import { plainParagraph } from '../../actors/realm/messages/render-plain.ts';
import { renderMessage, renderWithMarkdownIt } from '../../actors/realm/messages/render.ts';
import { compileLinkifier } from '../../actors/realm/linkifiers/pattern.ts';
import { emptyRealm } from '../../actors/realm/state.ts';

const realm = emptyRealm(1, '', 'Test', 0);

/** Pieces a line is built from: words and what the shortcut takes, and (more rarely) what it must not. */
const PLAIN = [
  'fox', 'Bench', 'naps', 'a', 'Z', 'héllo', 'Ünïcode', '日本語', 'x1', '42', 'the quick', ' ', ' ', ' ', ' ', '  ', ',', '.',
  ';', '?', '(', ')', '"', "'", '/', '|', '1.', '1)', ': ', '**bold**', '**two words**', '**9**', ' **x** ', '\u00a0', '\u2028',
  '\u3000', 'Ω', '😀', '\ud800', 'a.b', 'x.', '.y', '\nNext', '\nb', ' \nC', '\n\nD', '\n é', '\n', '\n1. x', '\n- x',
];
const EDGE = [
  ':', ' :', '::', '**', '*', ' **', '** ', '** x**', '**x **', '***x***', '__x__', '*x*', 'http://x.com', 'http:', 'https: ',
  'mailto:', 'mailto: a', 'www.', 'example.com', 'foo.org', 'x.co', 'localhost', 'xn--p1ai', 'user@host', '\t', '\r', '\n',
  '\u007f', '\u0001', '_', '&', '&amp;', '<', '>', '@', '#', '!', '~', '-', '+', '=', '`', '\\', ':smile:', ':+1:', '$$x$$',
  '/me ', '[', ']', '{', '}', '^', '%',
];

function generator(seed: number) {
  let state = seed;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
  const pick = (list: string[]) => list[Math.floor(next() * list.length)]!;
  return (): string => {
    let out = next() < 0.8 ? pick(['Word', 'é', 'B', '**Bold** x', '"']) : '';
    const count = 1 + Math.floor(next() * 12);
    for (let i = 0; i < count; i++) out += pick(next() < 0.1 ? EDGE : PLAIN);
    return next() < 0.5 ? out.trimEnd() : out;
  };
}

t.test('the plain-text shortcut renders exactly as markdown-it does', async (t) => {
  const line = generator(17);
  const inputs = [
    'Bench message: the quick brown fox jumps over the **lazy** dog, then naps.',
    'Hello', 'hello "world"', 'Two\nlines', 'Para\n\nGraphs', 'Ünï\ncödé', 'a **b** **c d**, (**e**) **f**; **g**? **h**.', 'Ends with **strong**',
  ];
  for (let i = 0; i < 60000; i++) inputs.push(line());
  let taken = 0;
  let lines = 0;
  let mismatches = 0;
  for (const content of inputs) {
    const fast = renderMessage(realm, 1, content);
    const full = renderWithMarkdownIt(realm, 1, content);
    if (plainParagraph(content) !== null) {
      taken++;
      if (content.includes('\n')) lines++;
    }
    if (fast.html !== full.html || fast.isMeMessage !== full.isMeMessage) {
      if (mismatches++ < 5) t.fail(`differs for ${JSON.stringify(content)}: ${fast.html} / ${full.html}`);
    }
  }
  t.equal(mismatches, 0);
  // The comparison means something only if many inputs take the shortcut and many do not.
  t.ok(taken > 5000 && taken < inputs.length - 5000, `${taken} of ${inputs.length} took the shortcut`);
  t.ok(lines > 500, `${lines} of them of several lines`);
  t.equal(plainParagraph(inputs[0]!), '<p>Bench message: the quick brown fox jumps over the <strong>lazy</strong> dog, then naps.</p>');
});

t.test('content the realm\'s linkifiers or fuzzy links may touch is left to markdown-it', async (t) => {
  t.match(renderMessage(realm, 1, 'see example.com now').html, /<a href="http:\/\/example.com"/);
  const linked = emptyRealm(2, '', 'Linked', 0);
  linked.linkifiers.compiled = [compileLinkifier({ id: 1, pattern: 'JIRA', urlTemplate: 'https://example.com/jira' })!];
  t.equal(plainParagraph('a JIRA b'), '<p>a JIRA b</p>');
  t.not(renderMessage(linked, 1, 'a JIRA b').html, '<p>a JIRA b</p>');
});
