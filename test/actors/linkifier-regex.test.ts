import t from 'tap';
import { compileRegex } from '../../actors/realm/linkifiers/regex/program.ts';
import { search } from '../../actors/realm/linkifiers/regex/search.ts';
import { parseRegex, RegexSyntaxError } from '../../actors/realm/linkifiers/regex/syntax.ts';
import { compileLinkifier, matchesOf } from '../../actors/realm/linkifiers/pattern.ts';
import { expandUriTemplate, parseUriTemplate } from '../../actors/realm/linkifiers/template.ts';
import { random } from '../helpers/random.ts';

/** The groups of the first match at or after `from` (undefined for a group that took no part), or null. */
function find(pattern: string, text: string, from = 0): (string | undefined)[] | null {
  const slots = search(compileRegex(parseRegex(pattern)), text, from, { atTextStart: true });
  if (!slots) return null;
  return Array.from({ length: slots.length / 2 }, (_, i) => (slots[i * 2]! < 0 ? undefined : text.slice(slots[i * 2], slots[i * 2 + 1])));
}

/** What V8's backtracking engine finds: the answer leftmost-first matching must agree with. */
function reference(pattern: string, text: string): (string | undefined)[] | null {
  const match = new RegExp(pattern.replace(/\(\?P</g, '(?<'), 'd').exec(text);
  return match ? [...match] : null;
}

t.test('matches as a backtracking engine would, on patterns both accept', async (t) => {
  const cases: [string, string][] = [
    ['#(?P<id>[0-9]+)', 'see #123 and #45'],
    ['a|ab', 'ab'],
    ['(a|ab)(c|bcd)(d*)', 'abcd'],
    ['a*?b', 'xaaab'],
    ['x{2,3}', 'xxxxx'],
    ['x{2,3}?', 'xxxxx'],
    ['x{2}', 'x xx'],
    ['x{2,}', 'xxxxx'],
    ['\\bfoo\\b', 'afoo foo'],
    ['\\Bo\\B', 'foo'],
    ['[^a-c]+', 'abcdef'],
    ['[a\\-z]+', 'b-az'],
    ['(a)|(b)', 'b'],
    ['(a*)+$', 'aaa'],
    ['(a?)(a?)(a?)aaa', 'aaa'],
    ['^$', ''],
    ['^abc$', 'abc'],
    ['(?P<org>[a-zA-Z0-9_-]+)/(?P<repo>[a-zA-Z0-9_-]+)#(?P<id>[0-9]+)', 'see zulip/zulip#123 ok'],
    ['\\d+\\.\\d*', 'v 12.5x'],
    ['[\\w.]+@[\\w.]+', 'mail me@example.com now'],
    ['(\\s|,)x', 'a,x'],
    ['.+', 'line\nnext'],
    ['\\x41\\x42\\n?', 'zAB'],
  ];
  for (const [pattern, text] of cases) t.same(find(pattern, text), reference(pattern, text), `${pattern} on ${JSON.stringify(text)}`);
});

t.test('agrees with a backtracking engine on random patterns and texts', async (t) => {
  const next = random(20261122);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  // No repeated group that can match the empty string: there ECMAScript drops an empty iteration's captures
  // where RE2 keeps them (`(a*)?` on "b": undefined against "").
  const atoms = ['a', 'b', 'c', '.', '[ab]', '[^a]', '\\d', '\\w', '(a|b)', '(ab|a)', '(?:b|)', '(?:a|b+)', '\\b', '^', '$'];
  const quantifiers = ['', '', '*', '+', '?', '*?', '+?', '??', '{2}', '{1,2}', '{0,3}?'];
  let checked = 0;
  for (let i = 0; i < 400; i++) {
    const pattern = Array.from({ length: 1 + Math.floor(next() * 4) }, () => {
      const atom = pick(atoms);
      return atom === '\\b' || atom === '^' || atom === '$' ? atom : atom + pick(quantifiers);
    }).join('');
    const text = Array.from({ length: Math.floor(next() * 8) }, () => pick(['a', 'b', 'c', '1', ' '])).join('');
    const ours = find(pattern, text);
    const theirs = reference(pattern, text);
    if (JSON.stringify(ours) !== JSON.stringify(theirs)) t.same(ours, theirs, `${pattern} on ${JSON.stringify(text)}`);
    checked++;
  }
  t.equal(checked, 400);
});

t.test('RE2 syntax that JavaScript spells differently or lacks', async (t) => {
  t.same(find('(?i)abc', 'xxABcx'), ['ABc']);
  t.same(find('a(?i:b)c', 'aBc aBC'), ['aBc']);
  t.same(find('a(?i)b|c', 'C'), ['C'], '(?i) holds to the end of its group, through the alternatives');
  t.same(find('(?i)[a-c]+', 'xABCd'), ['ABC']);
  t.same(find('(?s).', '\n'), ['\n']);
  t.same(find('.', '\n'), null);
  t.same(find('(?m)^b$', 'a\nb\nc'), ['b']);
  t.same(find('^b$', 'a\nb\nc'), null);
  t.same(find('(?U)a+', 'aaa'), ['a'], 'ungreedy');
  t.same(find('\\pL+', 'éé1'), ['éé']);
  t.same(find('\\p{Greek}+', 'abγδ'), ['γδ']);
  t.same(find('\\PN+', '12ab3'), ['ab']);
  t.same(find('[[:digit:][:upper:]]+', 'abC12d'), ['C12']);
  t.same(find('\\Qa.b\\E+', 'axb a.bb'), ['a.bb']);
  t.same(find('\\Q(a|b)*', 'b (a|b)**'), ['(a|b)*'], 'to the end of the pattern without \\E');
  t.same(find('[]a]+', 'x]a]'), [']a]'], 'a ] first in a class is itself');
  t.same(find('\\x{42}+', 'aBB'), ['BB']);
  t.same(find('\\Aab\\z', 'ab'), ['ab']);
  t.same(find('😀+', 'x😀😀y'), ['😀😀'], 'astral characters are one character');
  t.same(find('\\d', '٣ 3'), ['3'], '\\d is ASCII, as in RE2');
  t.same(find('#(\\d+)', 'a #1 #2', 4), ['#2', '2'], 'a search from an offset');
  const program = compileRegex(parseRegex('^x'));
  t.equal(search(program, 'x', 0, { atTextStart: false }), null, 'a piece of a text does not start it');
});

t.test('syntax errors are worded as RE2 words them', async (t) => {
  const errors: [string, string][] = [
    ['(foo', 'missing ): (foo'],
    ['foo)', 'unexpected ): foo)'],
    ['ZUL-(?P<id>\\d????)', 'bad repetition operator: ????'],
    ['a**', 'bad repetition operator: **'],
    ['*a', 'missing argument to repetition operator: *'],
    ['a|*', 'missing argument to repetition operator: *'],
    ['^*', 'missing argument to repetition operator: ^*'],
    ['{2}', 'missing argument to repetition operator: {2}'],
    ['a{1001}', 'bad repetition operator: {1001}'],
    ['a{3,2}', 'bad repetition operator: {3,2}'],
    ['(?P<1a>x)', 'invalid named capture group: (?P<1a>'],
    ['(?P<a>x)(?P<a>y)', 'duplicate capture group name: a'],
    ['(?=a)', 'invalid or unsupported Perl syntax: (?='],
    ['(?!a)', 'invalid or unsupported Perl syntax: (?!'],
    ['(?<!a)', 'invalid or unsupported Perl syntax: (?<!'],
    ['(?P=a)', 'invalid or unsupported Perl syntax: (?P='],
    ['(?x)', 'invalid or unsupported Perl syntax: (?x'],
    ['(a)\\1', 'invalid escape sequence: \\1'],
    ['\\Z', 'invalid escape sequence: \\Z'],
    ['[z-a]', 'invalid character class range: z-a'],
    ['[abc', 'missing closing ]: [abc'],
    ['\\p{Nope}', 'invalid character class range: \\p{Nope}'],
    ['[[:nope:]]', 'invalid character class range: [:nope:]'],
    ['(x{1000}){1000}', 'pattern too large - compile failed'],
  ];
  for (const [pattern, message] of errors) {
    t.throws(() => compileRegex(parseRegex(pattern)), new RegexSyntaxError(message), pattern);
  }
  t.same(find('a{,2}', 'a{,2}'), ['a{,2}'], 'a brace that is no repetition is itself');
});

t.test('a pattern that backtracks exponentially elsewhere runs in linear time', async (t) => {
  // 25 letters would take a backtracking engine about 2^25 steps; 100,000 take this one a moment.
  t.same(find('(a+)+$', `${'a'.repeat(100_000)}!`), null);
  t.same(find('(\\w+\\s?)+!', `${'ab '.repeat(20_000)}?`), null);
});

t.test('a linkifier matches between delimiters, as the original\'s wrapped pattern does', async (t) => {
  const linked = (pattern: string, text: string, atTextStart = true) => {
    const linkifier = compileLinkifier({ id: 1, pattern, urlTemplate: 'https://example.com/{id}' })!;
    return matchesOf(linkifier, text, atTextStart).map((match) => [text.slice(match.start, match.end), match.url]);
  };
  t.same(linked('#(?P<id>\\d+)', '#1 #2,#3 a#4 (#5) #6x "#7" <#8> :#9\u00a0#10'), [
    ['#1', 'https://example.com/1'], ['#2', 'https://example.com/2'], ['#3', 'https://example.com/3'], ['#5', 'https://example.com/5'],
    ['#7', 'https://example.com/7'], ['#8', 'https://example.com/8'], ['#9', 'https://example.com/9'], ['#10', 'https://example.com/10'],
  ], 'after the start, a space or an opening delimiter; not before a letter or digit');
  t.same(linked('#(?P<id>\\d+)', '#1', false), [], 'a piece of text after markup does not start a text');
  t.same(linked('#(?P<id>\\d+),?', '#1,#2'), [['#1,', 'https://example.com/1']], 'the delimiter must follow the previous match, not be part of it');
  t.same(linked('(?P<id>x?)', 'a b'), [], 'empty matches link nothing (and end)');
  t.same(linked('#(?P<id>\\d+)(?P<rest>-\\d+)?', '#1 #2-3').map(([text]) => text), ['#1', '#2-3'], 'a group that took no part is left out');
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
