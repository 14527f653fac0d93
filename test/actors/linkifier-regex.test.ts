import RE2 from 're2';
import t from 'tap';
import { compileLinkifier, matchesOf } from '../../actors/realm/linkifiers/pattern.ts';
import { compileRe2, Re2SyntaxError } from '../../actors/realm/linkifiers/re2.ts';
import { expandUriTemplate, parseUriTemplate } from '../../actors/realm/linkifiers/template.ts';
import { random } from '../helpers/random.ts';

/** The groups of the first match of a pattern compiled for RE2 (undefined for a group that took no part), or null. */
function find(pattern: string, text: string): (string | undefined)[] | null {
  const { regex } = compileRe2(pattern);
  regex.lastIndex = 0;
  const match = regex.exec(text);
  return match ? [...match] : null;
}

/** A linkifier's matches: the linked text, its UTF-16 offsets and its URL. */
function linked(pattern: string, urlTemplate: string, text: string, atTextStart = true): [string, number, number, string][] {
  const linkifier = compileLinkifier({ id: 1, pattern, urlTemplate });
  if (!linkifier) throw new Error(`${pattern} does not compile`);
  return matchesOf(linkifier, text, atTextStart).map((match) => [text.slice(match.start, match.end), match.start, match.end, match.url]);
}

const width = (text: string, at: number) => (text.codePointAt(at)! > 0xffff ? 2 : 1);

/**
 * What V8's backtracking engine finds with the original's delimiters written as look-behind and look-ahead,
 * searched as the original searches (each search from the end of the last linked text; a delimiter before the
 * search's start does not count): the answer leftmost-first matching must agree with.
 */
function reference(pattern: string, urlTemplate: string, text: string): [string, number, number, string][] {
  const regex = new RegExp(`(?<=^|[\\s\\x85\\p{Z}'"(,:<])(?:${pattern.replace(/\(\?P</g, '(?<')})(?=$|[^\\p{L}\\p{N}])`, 'gu');
  const template = parseUriTemplate(urlTemplate)!;
  const out: [string, number, number, string][] = [];
  for (let from = 0; from < text.length; ) {
    regex.lastIndex = from;
    let match = regex.exec(text);
    while (match && match.index === from && from > 0) {
      regex.lastIndex = from + width(text, from);
      match = regex.exec(text);
    }
    if (!match) break;
    const start = match.index;
    const end = start + match[0].length;
    from = end > from ? end : from + width(text, from);
    if (end > start) out.push([match[0], start, end, expandUriTemplate(template, match.groups ?? {})]);
  }
  return out;
}

t.test('linkifiers match between the original\'s delimiters, as a backtracking engine would', async (t) => {
  const cases: [string, string][] = [
    ['#(?P<id>[0-9]+)', 'see #123 and #45'],
    ['(?P<id>a|ab)', 'ab'],
    ['(?P<id>a|ab)(?P<x>c|bcd)(?P<y>d*)', 'abcd'],
    ['(?P<id>a*?b)', 'xaaab aab'],
    ['(?P<id>x{2,3})', 'xxxxx xxx'],
    ['(?P<id>x{2,3}?)', 'xx xxx'],
    ['(?P<id>\\bfoo\\b)', 'afoo foo'],
    ['(?P<id>[^a-c]+)', 'abc def'],
    ['(?P<id>a)|(?P<x>b)', 'a b'],
    ['(?P<id>a*)+$', 'aaa'],
    ['(?P<id>a?)(?P<x>a?)(?P<y>a?)aaa', 'aaa'],
    ['(?P<org>[a-zA-Z0-9_-]+)/(?P<repo>[a-zA-Z0-9_-]+)#(?P<id>[0-9]+)', 'see zulip/zulip#123 ok'],
    ['(?P<id>\\d+\\.\\d*)', 'v 12.5x 12.5 .5'],
    ['(?P<id>[\\w.]+@[\\w.]+)', 'mail me@example.com now'],
    ['#(?P<id>\\d+)', '#1 #2,#3 a#4 (#5) #6x "#7" <#8> :#9\u00a0#10\u2003#11\u0085#12'],
    ['#(?P<id>\\d+)', 'é😀 #12é #3 😀#4 #5😀 #6'],
    ['(?P<id>😀+)', 'x 😀😀 y'],
  ];
  for (const [pattern, text] of cases) {
    const names = [...pattern.matchAll(/\(\?P<(\w+)>/g)].map((match) => match[1]);
    const template = `https://example.com/{?${[...new Set(names)].join(',')}}`;
    t.same(linked(pattern, template, text), reference(pattern, template, text), `${pattern} on ${JSON.stringify(text)}`);
  }
});

t.test('agrees with a backtracking engine on random patterns and texts', async (t) => {
  const next = random(20261125);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  // No repeated group that can match the empty string: there ECMAScript drops an empty iteration's captures
  // where RE2 keeps them (`(a*)?` on "b": undefined against "").
  const atoms = ['a', 'b', 'c', '.', '[ab]', '[^a]', '\\d', '\\w', '(a|b)', '(ab|a)', '(?:b|)', '(?:a|b+)', '\\b', '^', '$', ' ', '😀'];
  const quantifiers = ['', '', '*', '+', '?', '*?', '+?', '??', '{2}', '{1,2}', '{0,3}?'];
  let checked = 0;
  let linkedSome = 0;
  for (let i = 0; i < 1000; i++) {
    let groups = 0;
    const pattern = Array.from({ length: 1 + Math.floor(next() * 4) }, () => {
      const atom = pick(atoms);
      return atom === '\\b' || atom === '^' || atom === '$' ? atom : atom + pick(quantifiers);
    }).join('').replace(/\((?!\?)/g, () => `(?P<g${++groups}>`);
    const template = `https://example.com/${groups ? `{?${Array.from({ length: groups }, (_, i) => `g${i + 1}`).join(',')}}` : ''}`;
    const text = Array.from({ length: Math.floor(next() * 10) }, () => pick(['a', 'b', 'c', '1', ' ', ' ', ',', 'é', '😀'])).join('');
    const ours = linked(pattern, template, text);
    const theirs = reference(pattern, template, text);
    if (JSON.stringify(ours) !== JSON.stringify(theirs)) t.same(ours, theirs, `${pattern} on ${JSON.stringify(text)}`);
    checked++;
    if (ours.length) linkedSome++;
  }
  t.equal(checked, 1000);
  t.ok(linkedSome > 100, `${linkedSome} of the cases link something`);
});

t.test('matches, offsets and groups at the edges of a text and of a piece of one', async (t) => {
  const TEMPLATE = 'https://example.com/{id}';
  t.same(linked('#(?P<id>\\d+)', TEMPLATE, '#1', false), [], 'a piece of text after markup does not start a text');
  t.same(linked('#(?P<id>\\d+)', TEMPLATE, 'x #1', false), [['#1', 2, 4, 'https://example.com/1']], 'a delimiter inside the piece does');
  for (const pattern of ['(?P<id>^x)', '(?P<id>\\Ax)', '(?P<id>(?m)^x)']) {
    t.same(linked(pattern, TEMPLATE, 'x'), [['x', 0, 1, 'https://example.com/x']], `${pattern} at the start of a text`);
    t.same(linked(pattern, TEMPLATE, 'x', false), [], `${pattern} not at the start of a piece`);
  }
  t.same(linked('(?P<id>(?m)^x)', TEMPLATE, 'a\nx'), [['x', 2, 3, 'https://example.com/x']], '(?m)^ after a line end');
  t.same(linked('#(?P<id>\\d+),?', TEMPLATE, '#1,#2'), [['#1,', 0, 3, 'https://example.com/1']], 'the delimiter must follow the previous match, not be part of it');
  t.same(linked('#(?P<id>\\d+)', TEMPLATE, '#1 #2 #3').map(([text]) => text), ['#1', '#2', '#3'], 'one delimiter between consecutive matches is enough');
  t.same(linked('(?P<id>x?)', TEMPLATE, 'a b 😀 😀'), [], 'empty matches link nothing (and end)');
  t.same(linked('#(?P<id>\\d+)(?P<rest>-\\d+)?', 'https://example.com/{id}{rest}', '#1 #2-3').map(([, , , url]) => url),
    ['https://example.com/1', 'https://example.com/2-3'], 'a group that took no part is left out');
  t.same(linked('(?i)jira-(?P<id>\\d+)', TEMPLATE, 'JIRA-1 jira-2 Jira-3').map(([text]) => text), ['JIRA-1', 'jira-2', 'Jira-3'], '(?i)');
  t.same(linked('(?P<id>\\pL+)-\\d', TEMPLATE, 'a é😀 ĳé-1 x'), [['ĳé-1', 6, 10, 'https://example.com/%C4%B3%C3%A9']], 'UTF-16 offsets after astral and non-ASCII characters');
  t.same(linked('(?P<id>\\d+)', TEMPLATE, `${'é😀 '.repeat(3)}😀 7`)[0]?.slice(1, 3), [15, 16], 'offsets after several astral characters');
  // Many matches in a long non-ASCII text: each search continues from the last (a search from the start of the
  // text each time would be quadratic).
  const long = 'é #1 '.repeat(20_000);
  const many = linked('#(?P<id>\\d+)', TEMPLATE, long);
  t.equal(many.length, 20_000);
  t.same(many.at(-1), ['#1', long.length - 3, long.length - 1, 'https://example.com/1']);
});

t.test('RE2 syntax that JavaScript spells differently or lacks', async (t) => {
  t.same(find('(?i)abc', 'xxABcx'), ['ABc']);
  t.same(find('a(?i:b)c', 'aBc aBC'), ['aBc']);
  t.same(find('a(?i)b|c', 'C'), ['C'], '(?i) holds to the end of its group, through the alternatives');
  t.same(find('(?s).', '\n'), ['\n']);
  t.same(find('.', '\n'), null);
  t.same(find('(?m)^b$', 'a\nb\nc'), ['b']);
  t.same(find('^b$', 'a\nb\nc'), null);
  t.same(find('(?U)a+', 'aaa'), ['a'], 'ungreedy');
  t.same(find('\\pL+', 'éé1'), ['éé']);
  t.same(find('\\p{Greek}+', 'abγδ'), ['γδ']);
  t.same(find('\\P{Greek}+', 'γδab'), ['ab']);
  t.same(find('\\p{^Greek}+', 'γδab'), ['ab']);
  t.same(find('\\PN+', '12ab3'), ['ab']);
  t.same(find('[[:digit:][:upper:]]+', 'abC12d'), ['C12']);
  t.same(find('\\Qa.b\\E+', 'axb a.bb'), ['a.bb']);
  t.same(find('\\Q(a|b)*', 'b (a|b)**'), ['(a|b)*'], 'to the end of the pattern without \\E');
  t.same(find('\\Q\\cA\\u0041(?<x>/\\E', '\\cA\\u0041(?<x>/'), ['\\cA\\u0041(?<x>/'], 'inside \\Q...\\E, what the binding would rewrite is itself');
  t.same(find('[(?<a/]+', 'x(?<a/b'), ['(?<a/'], 'and inside a class');
  t.same(find('[]a]+', 'x]a]'), [']a]'], 'a ] first in a class is itself');
  t.same(find('[^]a]+', ']a]bc'), ['bc']);
  t.same(find('\\x{42}+', 'aBB'), ['BB']);
  t.same(find('\\Aab\\z', 'ab'), ['ab']);
  t.same(find('😀+', 'x😀😀y'), ['😀😀'], 'astral characters are one character');
  t.same(find('\\d', '٣ 3'), ['3'], '\\d is ASCII, as in RE2');
  t.same(find('\\C+', 'é😀'), ['é😀'], '\\C (one byte in RE2) takes whole characters');
  t.same(find('(?<a>x)(?P<b>y)', 'xy'), ['xy', 'x', 'y']);
  t.same(compileRe2('(?<a>x)(?P<b>y)(z)(?P<c>w)?').names, ['a', 'b', 'c'], 'named groups, in order');
  t.same(compileRe2('(?P<1a>x)').names, ['1a'], 'RE2 takes any word characters as a name');
});

t.test('syntax errors are RE2\'s, quoting the pattern as written', async (t) => {
  const errors: [string, string][] = [
    ['(foo', 'missing ): (foo'],
    ['foo)', 'unexpected ): foo)'],
    ['ZUL-(?P<id>\\d????)', 'bad repetition operator: ????'],
    ['a**', 'bad repetition operator: **'],
    ['*a', 'no argument for repetition operator: *'],
    ['a|*', 'no argument for repetition operator: *'],
    ['{2}', 'no argument for repetition operator: {2}'],
    ['a{1001}', 'invalid repetition size: {1001}'],
    ['a{3,2}', 'invalid repetition size: {3,2}'],
    ['(x{1000}){1000}', 'invalid repetition size: {1000}'],
    ['(?P<a b>x)', 'invalid named capture group: (?P<a b>'],
    ['(?<a b>x)', 'invalid named capture group: (?<a b>'],
    ['(?<a', 'invalid named capture group: (?<a'],
    ['(?<', 'invalid perl operator: (?<'],
    ['(?P<a>x)(?P<a>y)', 'duplicate capture group name: a'],
    ['(?=a)', 'invalid perl operator: (?='],
    ['(?!a)', 'invalid perl operator: (?!'],
    ['(?<!a)', 'invalid perl operator: (?<!'],
    ['(?x)', 'invalid perl operator: (?x'],
    ['(a)\\1', 'invalid escape sequence: \\1'],
    ['\\Z', 'invalid escape sequence: \\Z'],
    ['a\\E', 'invalid escape sequence: \\E'],
    ['[\\Q]', 'invalid escape sequence: \\Q'],
    ['a\\', 'trailing \\'],
    ['[z-a]', 'invalid character class range: z-a'],
    ['[abc', 'missing ]: [abc'],
    ['\\p{Nope}', 'invalid character class range: \\p{Nope}'],
    ['[[:nope:]]', 'invalid character class range: [:nope:]'],
    // JavaScript's spellings, which the binding would have accepted:
    ['\\cA', 'invalid escape sequence: \\c'],
    ['[\\cA]', 'invalid escape sequence: \\c'],
    ['\\u0041', 'invalid escape sequence: \\u'],
    ['\\u{41}', 'invalid escape sequence: \\u'],
    ['\\p{Letter}', 'invalid character class range: \\p{Letter}'],
    ['x\\P{Script=Greek}', 'invalid character class range: \\P{Script=Greek}'],
    // The binding escapes `/`; the error quotes the pattern as written.
    ['(?P<org>[a-z]+)/(?P<repo>[a-z]+', 'missing ): (?P<org>[a-z]+)/(?P<repo>[a-z]+'],
    ['\\Q/(\\E(', 'missing ): \\Q/(\\E('],
  ];
  for (const [pattern, message] of errors) t.throws(() => compileRe2(pattern), new Re2SyntaxError(message), pattern);
  for (const accepted of ['a{,2}', '^*', '(?P<1a>x)', '\\pN', '[[:word:]]', '(?i)\\Q']) t.doesNotThrow(() => compileRe2(accepted), accepted);
});

t.test('a pattern that backtracks exponentially elsewhere is matched by RE2, in linear time', async (t) => {
  const linkifier = compileLinkifier({ id: 1, pattern: '(?P<id>(a*)*b)', urlTemplate: 'https://example.com/{id}' })!;
  t.ok(linkifier.regex instanceof RE2, 'RE2 runs it');
  // 30 letters would take a backtracking engine about 2^30 steps; 100,000 take RE2 a moment.
  t.same(matchesOf(linkifier, 'a'.repeat(100_000), true), []);
  t.same(linked('(?P<id>(a+)+$)', 'https://example.com/{id}', `${'a'.repeat(100_000)}!`), []);
  t.same(linked('(?P<id>(\\w+\\s?)+!)', 'https://example.com/{id}', `${'ab '.repeat(20_000)}?`), []);
  t.same(linked('(?P<id>(a*)*b)', 'https://example.com/{id}', `${'a'.repeat(50_000)}b`).map(([, start, end]) => [start, end]), [[0, 50_001]]);
});

t.test('URI templates: the RFC 6570 operators, with the encodings of each', async (t) => {
  const values = { var: 'value', hello: 'Hello World!', path: '/foo/bar', x: '1024', y: '768', empty: '', id: 'ä/1' };
  const cases: [string, string][] = [
    ['https://example.com/{var}', 'https://example.com/value'],
    ['{hello}', 'Hello%20World%21'],
    ['{+hello}', 'Hello%20World!'],
    ['{+path}/here', '/foo/bar/here'],
    ['{path}', '%2Ffoo%2Fbar'],
    ['{#path}', '#/foo/bar'],
    ['X{.var}', 'X.value'],
    ['{/var,x}/here', '/value/1024/here'],
    ['{;x,y,empty}', ';x=1024;y=768;empty'],
    ['{?x,y,empty}', '?x=1024&y=768&empty='],
    ['?fixed=yes{&x}', '?fixed=yes&x=1024'],
    ['{var:3}', 'val'],
    ['{x,y}', '1024,768'],
    ['{id}', '%C3%A4%2F1'],
    ['{missing}{?missing}x', 'x'],
    ['https://example.com/%ba/{x}', 'https://example.com/%ba/1024'],
    ['$not_a_url$', '$not_a_url$'],
  ];
  for (const [template, expected] of cases) {
    const parsed = parseUriTemplate(template);
    t.ok(parsed, template);
    t.equal(expandUriTemplate(parsed!, values), expected, template);
  }
  t.same([...parseUriTemplate('https://zone_{zone}{.domain}.net/ticket{/location}{/id}{?name,chapter}{#fragment:5}')!.names],
    ['zone', 'domain', 'location', 'id', 'name', 'chapter', 'fragment']);
  for (const bad of ['https://example.com/{foo', 'https://example.com/{{}', 'https://example.com/{//foo}', 'https://example.com/{bar++}', '{}', 'a}b', '{=x}', '{x:0}', '{x:10000}']) {
    t.equal(parseUriTemplate(bad), null, bad);
  }
});
