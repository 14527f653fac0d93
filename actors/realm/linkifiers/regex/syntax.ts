/**
 * The syntax of linkifier patterns: the RE2 dialect the original server compiles them with (Python-style
 * `(?P<name>...)` groups, inline flags, `\pL` classes; no backreferences or lookaround), parsed into a tree
 * that program.ts compiles for the linear-time matcher in search.ts. V8's own engine backtracks, so an
 * administrator's pattern such as `(\w+\s?)+$` would stall the realm on every message it is run against.
 */

/** Does a code point belong to a character class? */
export type CharTest = (codePoint: number) => boolean;

export type Assertion =
  | 'text_start'
  | 'text_end'
  | 'line_start'
  | 'line_end'
  | 'word_boundary'
  | 'not_word_boundary'
  /**
   * Not in the syntax; built by linkifiers for their delimiters. The character before is one of these, or
   * this is the start of the text; a character before the search's starting point does not count.
   */
  | { precededBy: CharTest }
  /** The character after is one of these, or this is the end of the text. */
  | { followedBy: CharTest };

export type Node =
  | { kind: 'empty' }
  | { kind: 'char'; test: CharTest }
  | { kind: 'assert'; what: Assertion }
  /** `capture`: the group's number (1-based), or null for a non-capturing group */
  | { kind: 'group'; body: Node; capture: number | null }
  | { kind: 'concat'; items: Node[] }
  | { kind: 'alt'; items: Node[] }
  | { kind: 'repeat'; body: Node; min: number; max: number; greedy: boolean };

export interface Parsed {
  root: Node;
  /** how many capturing groups */
  groups: number;
  /** named group -> its number */
  names: Map<string, number>;
}

export class RegexSyntaxError extends Error {}

/** RE2's cap on a counted repetition. */
const MAX_REPEAT = 1000;

interface Flags {
  /** i: case-insensitive */
  caseless: boolean;
  /** m: ^ and $ match at line ends */
  multiLine: boolean;
  /** s: . matches \n */
  dotNewline: boolean;
  /** U: repetitions are lazy unless marked with ? */
  ungreedy: boolean;
}

const isAsciiWord = (cp: number) => (cp >= 48 && cp <= 57) || (cp >= 65 && cp <= 90) || (cp >= 97 && cp <= 122) || cp === 95;
const isAsciiDigit = (cp: number) => cp >= 48 && cp <= 57;
// RE2's \s: ASCII whitespace without \v.
const isAsciiSpace = (cp: number) => cp === 9 || cp === 10 || cp === 12 || cp === 13 || cp === 32;
export { isAsciiWord };

const not = (test: CharTest): CharTest => (cp) => !test(cp);
const any: CharTest = () => true;

const POSIX_CLASSES: Record<string, CharTest> = {
  alnum: (cp) => isAsciiWord(cp) && cp !== 95,
  alpha: (cp) => (cp >= 65 && cp <= 90) || (cp >= 97 && cp <= 122),
  ascii: (cp) => cp <= 0x7f,
  blank: (cp) => cp === 9 || cp === 32,
  cntrl: (cp) => cp <= 0x1f || cp === 0x7f,
  digit: isAsciiDigit,
  graph: (cp) => cp >= 0x21 && cp <= 0x7e,
  lower: (cp) => cp >= 97 && cp <= 122,
  print: (cp) => cp >= 0x20 && cp <= 0x7e,
  punct: (cp) => (cp >= 0x21 && cp <= 0x2f) || (cp >= 0x3a && cp <= 0x40) || (cp >= 0x5b && cp <= 0x60) || (cp >= 0x7b && cp <= 0x7e),
  space: (cp) => isAsciiSpace(cp) || cp === 11,
  upper: (cp) => cp >= 65 && cp <= 90,
  word: isAsciiWord,
  xdigit: (cp) => isAsciiDigit(cp) || (cp >= 65 && cp <= 70) || (cp >= 97 && cp <= 102),
};

/** `\pL`, `\p{Greek}`: a Unicode general category or script, through the host's Unicode tables. */
function unicodeClass(name: string): CharTest | null {
  const negated = name.startsWith('^');
  const bare = negated ? name.slice(1) : name;
  if (!/^[A-Za-z_]+$/.test(bare)) return null;
  for (const source of bare === 'Any' ? ['[^]'] : [`\\p{${bare}}`, `\\p{Script=${bare}}`]) {
    try {
      const regex = new RegExp(`^${source}$`, 'u');
      const test: CharTest = (cp) => regex.test(String.fromCodePoint(cp));
      return negated ? not(test) : test;
    } catch {
      // not a name the host knows in this form
    }
  }
  return null;
}

const foldings = (cp: number): number[] => {
  const text = String.fromCodePoint(cp);
  const out = [cp];
  for (const other of [text.toLowerCase(), text.toUpperCase()]) {
    const code = other.codePointAt(0)!;
    if (other.length === String.fromCodePoint(code).length && !out.includes(code)) out.push(code);
  }
  return out;
};

const caseless = (test: CharTest): CharTest => (cp) => foldings(cp).some(test);

/** Parses a pattern; throws RegexSyntaxError with RE2's wording of the problem. */
export function parseRegex(source: string): Parsed {
  return new Parser(source).parse();
}

class Parser {
  private pos = 0;
  /** inside `\Q...\E`, where every character is itself */
  private quoting = false;
  private groups = 0;
  private readonly names = new Map<string, number>();

  constructor(private readonly src: string) {}

  parse(): Parsed {
    const root = this.alternation({ caseless: false, multiLine: false, dotNewline: false, ungreedy: false });
    if (this.pos < this.src.length) throw this.error('unexpected )', this.src);
    return { root, groups: this.groups, names: this.names };
  }

  private error(what: string, text: string): RegexSyntaxError {
    return new RegexSyntaxError(`${what}: ${text}`);
  }

  private peek(offset = 0): string | undefined {
    return this.src[this.pos + offset];
  }

  /** The next code point, consumed. */
  private next(): number {
    const cp = this.src.codePointAt(this.pos)!;
    this.pos += cp > 0xffff ? 2 : 1;
    return cp;
  }

  /** Alternatives up to a `)` or the end; `flags` belong to the enclosing group and (?i) changes them. */
  private alternation(flags: Flags): Node {
    const items = [this.concatenation(flags)];
    while (this.peek() === '|') {
      this.pos++;
      items.push(this.concatenation(flags));
    }
    return items.length === 1 ? items[0]! : { kind: 'alt', items };
  }

  private concatenation(flags: Flags): Node {
    const items: Node[] = [];
    while (this.pos < this.src.length && (this.quoting || (this.peek() !== '|' && this.peek() !== ')'))) {
      const start = this.pos;
      const atom = this.quoting ? this.quoted(flags) : this.atom(flags);
      if (atom) items.push(this.quoting ? atom : this.repetitions(atom, flags, start));
    }
    if (items.length === 0) return { kind: 'empty' };
    return items.length === 1 ? items[0]! : { kind: 'concat', items };
  }

  /** A character inside `\Q...\E`; a repetition right after the `\E` applies to the last one, as in RE2. */
  private quoted(flags: Flags): Node | null {
    if (this.src.startsWith('\\E', this.pos)) {
      this.pos += 2;
      this.quoting = false;
      return null;
    }
    const node = literal(this.next(), flags);
    if (this.src.startsWith('\\E', this.pos)) {
      this.pos += 2;
      this.quoting = false;
    }
    return node;
  }

  /** One atom, or null for a flag group such as `(?i)` that only changes the flags. */
  private atom(flags: Flags): Node | null {
    const char = this.peek()!;
    switch (char) {
      case '(':
        return this.group(flags);
      case '[':
        return { kind: 'char', test: this.characterClass(flags) };
      case '.':
        this.pos++;
        return { kind: 'char', test: flags.dotNewline ? any : (cp) => cp !== 10 };
      case '^':
        this.pos++;
        return { kind: 'assert', what: flags.multiLine ? 'line_start' : 'text_start' };
      case '$':
        this.pos++;
        return { kind: 'assert', what: flags.multiLine ? 'line_end' : 'text_end' };
      case '\\':
        return this.escape(flags);
      case '*':
      case '+':
      case '?':
        throw this.error('missing argument to repetition operator', char);
      case '{': {
        const counted = this.countedRepeat();
        if (counted) throw this.error('missing argument to repetition operator', counted.text);
        this.pos++;
        return literal(123, flags);
      }
      default:
        return literal(this.next(), flags);
    }
  }

  /** `*`, `+`, `?`, `{n,m}` after an atom, each optionally lazy; a second operator in a row is an error. */
  private repetitions(atom: Node, flags: Flags, atomStart: number): Node {
    let node = atom;
    let firstOperator = -1;
    for (;;) {
      const operatorStart = this.pos;
      const bounds = this.repeatOperator();
      if (!bounds) return node;
      let greedy = !flags.ungreedy;
      if (this.peek() === '?') {
        this.pos++;
        greedy = !greedy;
      }
      if (firstOperator >= 0) throw this.error('bad repetition operator', this.src.slice(firstOperator, this.pos));
      // Nothing to repeat, or an assertion (`^*`): RE2 refuses both.
      if (atom.kind === 'empty' || atom.kind === 'assert') throw this.error('missing argument to repetition operator', this.src.slice(atomStart, this.pos));
      firstOperator = operatorStart;
      node = { kind: 'repeat', body: node, min: bounds.min, max: bounds.max, greedy };
    }
  }

  private repeatOperator(): { min: number; max: number } | null {
    switch (this.peek()) {
      case '*':
        this.pos++;
        return { min: 0, max: Infinity };
      case '+':
        this.pos++;
        return { min: 1, max: Infinity };
      case '?':
        this.pos++;
        return { min: 0, max: 1 };
      case '{': {
        const counted = this.countedRepeat();
        if (!counted) return null;
        this.pos += counted.text.length;
        if (counted.min > MAX_REPEAT || counted.max > MAX_REPEAT && counted.max !== Infinity || counted.max < counted.min) {
          throw this.error('bad repetition operator', counted.text);
        }
        return counted;
      }
      default:
        return null;
    }
  }

  /** `{n}`, `{n,}` or `{n,m}` at the current position (not consumed); anything else is a literal brace. */
  private countedRepeat(): { min: number; max: number; text: string } | null {
    const match = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.pos));
    if (!match) return null;
    const min = Number(match[1]);
    const max = match[2] === undefined ? min : match[3] === '' ? Infinity : Number(match[3]);
    return { min, max, text: match[0] };
  }

  private group(flags: Flags): Node | null {
    const start = this.pos;
    this.pos++;
    let capture: number | null = null;
    let inner = { ...flags };
    if (this.peek() === '?') {
      const named = /^\?P?<([^>]*)>/.exec(this.src.slice(this.pos));
      if (named && !/^\?<[=!]/.test(this.src.slice(this.pos))) {
        const name = named[1]!;
        if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw this.error('invalid named capture group', this.src.slice(start, this.pos + named[0].length));
        if (this.names.has(name)) throw this.error('duplicate capture group name', name);
        this.pos += named[0].length;
        capture = ++this.groups;
        this.names.set(name, capture);
      } else {
        const spec = /^\?([imsU]*)(?:-([imsU]*))?([:)])/.exec(this.src.slice(this.pos));
        if (!spec || spec[2] === '' || (spec[3] === ')' && !spec[1] && !spec[2])) {
          const shown = /^\?(P?<[=!]?|[=!]|P=?)/.exec(this.src.slice(this.pos))?.[0] ?? this.src.slice(this.pos, this.pos + 2);
          throw this.error('invalid or unsupported Perl syntax', `(${shown}`);
        }
        this.pos += spec[0].length;
        const changed = setFlags(setFlags(flags, spec[1]!, true), spec[2] ?? '', false);
        // `(?i)`: the flags change for the rest of the enclosing group (every alternative after it), no atom.
        if (spec[3] === ')') {
          Object.assign(flags, changed);
          return null;
        }
        inner = changed;
        const body = this.alternation(inner);
        this.closeGroup();
        return { kind: 'group', body, capture: null };
      }
    } else {
      capture = ++this.groups;
    }
    const body = this.alternation(inner);
    this.closeGroup();
    return { kind: 'group', body, capture };
  }

  private closeGroup(): void {
    if (this.peek() !== ')') throw this.error('missing )', this.src);
    this.pos++;
  }

  /** An escape outside a class: a class (`\d`, `\pL`), an assertion (`\b`, `\A`) or a literal. */
  private escape(flags: Flags): Node {
    const start = this.pos;
    this.pos++;
    const char = this.peek();
    if (char === undefined) throw this.error('trailing \\', '');
    switch (char) {
      case 'b':
      case 'B':
        this.pos++;
        return { kind: 'assert', what: char === 'b' ? 'word_boundary' : 'not_word_boundary' };
      case 'A':
        this.pos++;
        return { kind: 'assert', what: 'text_start' };
      case 'z':
        this.pos++;
        return { kind: 'assert', what: 'text_end' };
      case 'Q':
        this.pos++;
        this.quoting = true;
        return { kind: 'empty' };
    }
    this.pos = start;
    const item = this.escapeItem(flags);
    return { kind: 'char', test: item };
  }

  /** An escape that stands for characters, in or out of a class (at the backslash). */
  private escapeItem(flags: Flags): CharTest {
    const start = this.pos;
    this.pos++;
    const char = this.peek();
    if (char === undefined) throw this.error('trailing \\', '');
    const bad = () => this.error('invalid escape sequence', this.src.slice(start, this.pos));
    const single = (cp: number) => (flags.caseless ? caseless(exactly(cp)) : exactly(cp));
    switch (char) {
      case 'd':
      case 'D':
      case 's':
      case 'S':
      case 'w':
      case 'W': {
        this.pos++;
        const base = { d: isAsciiDigit, s: isAsciiSpace, w: isAsciiWord }[char.toLowerCase() as 'd' | 's' | 'w'];
        return char === char.toUpperCase() ? not(base) : base;
      }
      case 'p':
      case 'P': {
        this.pos++;
        let name: string;
        if (this.peek() === '{') {
          const end = this.src.indexOf('}', this.pos);
          if (end < 0) throw this.error('invalid character class range', this.src.slice(start));
          name = this.src.slice(this.pos + 1, end);
          this.pos = end + 1;
        } else {
          if (this.pos >= this.src.length) throw bad();
          name = String.fromCodePoint(this.next());
        }
        const test = unicodeClass(name);
        if (!test) throw this.error('invalid character class range', this.src.slice(start, this.pos));
        const cased = flags.caseless ? caseless(test) : test;
        return char === 'P' ? not(cased) : cased;
      }
      case 'x': {
        this.pos++;
        const match = /^(?:\{([0-9A-Fa-f]{1,6})\}|([0-9A-Fa-f]{2}))/.exec(this.src.slice(this.pos));
        const code = match ? parseInt(match[1] ?? match[2]!, 16) : NaN;
        if (!match || code > 0x10ffff) throw bad();
        this.pos += match[0].length;
        return single(code);
      }
      case '0': {
        const match = /^[0-7]{1,3}/.exec(this.src.slice(this.pos))!;
        this.pos += match[0].length;
        return single(parseInt(match[0], 8));
      }
    }
    const controls: Record<string, number> = { n: 10, t: 9, r: 13, f: 12, v: 11, a: 7 };
    this.pos++;
    if (char in controls) return single(controls[char]!);
    // Any other letter or digit names nothing (backreferences such as \1 among them); punctuation is itself.
    if (/[0-9A-Za-z]/.test(char)) throw bad();
    this.pos = start + 1;
    return single(this.next());
  }

  /** `[...]`, `[^...]`, with ranges, escapes and `[:alpha:]` classes. */
  private characterClass(flags: Flags): CharTest {
    const start = this.pos;
    this.pos++;
    const negated = this.peek() === '^';
    if (negated) this.pos++;
    const parts: CharTest[] = [];
    let first = true;
    for (;;) {
      if (this.pos >= this.src.length) throw this.error('missing closing ]', this.src.slice(start));
      if (this.peek() === ']' && !first) {
        this.pos++;
        break;
      }
      first = false;
      const posix = /^\[:(\^?)([a-z]+):\]/.exec(this.src.slice(this.pos));
      if (posix) {
        const test = POSIX_CLASSES[posix[2]!];
        if (!test) throw this.error('invalid character class range', posix[0]);
        this.pos += posix[0].length;
        parts.push(posix[1] ? not(test) : test);
        continue;
      }
      const itemStart = this.pos;
      const low = this.classAtom(flags);
      if (typeof low !== 'number') {
        parts.push(low);
        continue;
      }
      if (this.peek() === '-' && this.peek(1) !== ']' && this.peek(1) !== undefined) {
        this.pos++;
        const high = this.classAtom(flags);
        if (typeof high !== 'number' || high < low) throw this.error('invalid character class range', this.src.slice(itemStart, this.pos));
        parts.push((cp) => cp >= low && cp <= high);
        continue;
      }
      parts.push((cp) => cp === low);
    }
    const union: CharTest = (cp) => parts.some((part) => part(cp));
    const cased = flags.caseless ? caseless(union) : union;
    return negated ? not(cased) : cased;
  }

  /** One member of a class: a single code point (which may start a range), or a class of its own. */
  private classAtom(flags: Flags): number | CharTest {
    if (this.peek() !== '\\') return this.next();
    const start = this.pos;
    const letter = this.peek(1);
    if (letter !== undefined && /[dDsSwWpP]/.test(letter)) return this.escapeItem(flags);
    // Single characters are read without case folding here: the class folds as a whole.
    const test = this.escapeItem({ ...flags, caseless: false });
    const text = this.src.slice(start, this.pos);
    const code = singleCodeOfEscape(text);
    return code ?? test;
  }
}

/** The code point a single-character escape stands for (`\n`, `\x41`, `\-`), or null. */
function singleCodeOfEscape(text: string): number | null {
  const controls: Record<string, number> = { n: 10, t: 9, r: 13, f: 12, v: 11, a: 7 };
  const body = text.slice(1);
  if (body in controls) return controls[body]!;
  const hex = /^x\{?([0-9A-Fa-f]+)\}?$/.exec(body);
  if (hex) return parseInt(hex[1]!, 16);
  if (/^0[0-7]*$/.test(body)) return parseInt(body, 8);
  const cp = body.codePointAt(0);
  return cp !== undefined && String.fromCodePoint(cp) === body ? cp : null;
}

const exactly = (cp: number): CharTest => (other) => other === cp;

/** A literal character; under (?i) any of its case variants. */
function literal(cp: number, flags: Flags): Node {
  return { kind: 'char', test: flags.caseless ? caseless(exactly(cp)) : exactly(cp) };
}

function setFlags(flags: Flags, letters: string, on: boolean): Flags {
  const out = { ...flags };
  for (const letter of letters) {
    if (letter === 'i') out.caseless = on;
    if (letter === 'm') out.multiLine = on;
    if (letter === 's') out.dotNewline = on;
    if (letter === 'U') out.ungreedy = on;
  }
  return out;
}
