import RE2 from 're2';

/**
 * Linkifier patterns compiled with Google's RE2 (through the `re2` binding), the engine the original server
 * compiles them with: linear-time matching, so an administrator's `(\w+\s?)+$` cannot stall the realm.
 *
 * The binding first rewrites a pattern from JavaScript's syntax (`/` to `\/`, `(?<name>` to `(?P<name>`,
 * `\cA`, `\u0041`, `\p{Letter}`, `\p{Script=Greek}`), blind to `\Q...\E` and to character classes. RE2
 * refuses `\c`, `\u` and long class names, so the rewrite would accept patterns the original refuses and
 * change the text inside quotes and classes. `forBinding` therefore hands it a pattern on which its rewrite
 * changes nothing, meaning the same to RE2, and keeps where each piece came from to word errors with the
 * administrator's own text.
 */

export class Re2SyntaxError extends Error {}

export interface Compiled {
  regex: RE2;
  /** the pattern's named groups (in order, but as JavaScript orders keys: names that are numbers first) */
  names: string[];
}

/** Compiles a pattern (`wrap` puts the rewritten pattern inside other regex text); throws Re2SyntaxError worded as RE2 words it. */
export function compileRe2(pattern: string, wrap: (source: string) => string = (source) => source): Compiled {
  const rewritten = forBinding(pattern);
  const source = wrap(rewritten.source);
  let regex: RE2;
  try {
    // `g`: searches start at lastIndex, with the text before it seen by `^` and `\b`. `u` says what RE2 does anyway.
    regex = new RE2(source, 'gu');
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    throw new Re2SyntaxError(originalWording(error.message, pattern, rewritten));
  }
  // Another version of the binding could rewrite more; then RE2 would not be reading the administrator's pattern.
  if (source !== '' && regex.internalSource !== source) throw new Error(`the re2 binding rewrote ${source} as ${regex.internalSource}`);
  return { regex, names: groupNames(rewritten.source) };
}

/** Named groups in order, read from RE2 itself: an empty alternative matches the empty text and lists every group. */
function groupNames(source: string): string[] {
  return Object.keys(new RE2(`(?:${source})|`, 'u').exec('')?.groups ?? {});
}

interface Rewritten {
  source: string;
  /** for each UTF-16 unit of `source`: where the piece it belongs to starts and ends in the pattern */
  starts: number[];
  ends: number[];
  /** `(?P<name>` names in order, repeats included */
  names: string[];
}

const isAsciiAlphanumeric = (char: string) => /^[0-9A-Za-z]$/.test(char);

/** Rewrites a pattern so that the binding's own rewrite leaves it unchanged and RE2 reads what it would have read. */
function forBinding(pattern: string): Rewritten {
  const out: Rewritten = { source: '', starts: [], ends: [], names: [] };
  const emit = (text: string, from: number, to: number) => {
    const verbatim = text === pattern.slice(from, to);
    for (let i = 0; i < text.length; i++) {
      out.starts.push(verbatim ? from + i : from);
      out.ends.push(verbatim ? from + i + 1 : to);
    }
    out.source += text;
  };
  let quoting = false;
  // Inside [...]: `first` while a `]` would still be a member (right after `[` or `[^`).
  let inClass = false;
  let first = false;
  for (let i = 0; i < pattern.length; ) {
    const char = String.fromCodePoint(pattern.codePointAt(i)!);
    const next = pattern[i + char.length];
    if (quoting) {
      if (char === '\\' && next === 'E') {
        quoting = false;
        i += 2;
        continue;
      }
      // \Q...\E: every character is itself; punctuation escaped is still itself and the binding leaves it be.
      emit(char.length === 1 && char < '\x80' && !isAsciiAlphanumeric(char) ? `\\${char}` : char, i, i + char.length);
      i += char.length;
      continue;
    }
    const wasFirst = first;
    first = false;
    if (char === '\\') {
      i += escape(pattern, i, inClass, emit, () => (quoting = true));
      continue;
    }
    if (char === '/') {
      emit('\\/', i, i + 1);
    } else if (char === '(' && pattern.startsWith('(?<', i) && pattern[i + 3] !== '=' && pattern[i + 3] !== '!') {
      // RE2 reads `(?<name>` as `(?P<name>` (the binding would make it that); in a class it is a parenthesis.
      if (inClass) emit('\\(', i, i + 1);
      else if (i + 3 === pattern.length) {
        // RE2 refuses a pattern ending in `(?<` as a bad flag; `(?P<` would be a bad group name.
        emit('(?\\<', i, i + 3);
        i += 3;
        continue;
      } else {
        emit('(?P<', i, i + 3);
        out.names.push(nameAt(pattern, i + 3));
        i += 3;
        continue;
      }
    } else if (char === '(' && !inClass && pattern.startsWith('(?P<', i)) {
      out.names.push(nameAt(pattern, i + 4));
      emit(char, i, i + 1);
    } else if (char === '[' && !inClass) {
      inClass = true;
      first = true;
      const caret = pattern[i + 1] === '^' ? 1 : 0;
      emit(pattern.slice(i, i + 1 + caret), i, i + 1 + caret);
      i += 1 + caret;
      continue;
    } else if (char === '[' && next === ':' && pattern.indexOf(':]', i + 2) >= 0) {
      // `[:alpha:]` in a class, up to the first `:]` (what RE2 takes as its name, or refuses).
      const end = pattern.indexOf(':]', i + 2) + 2;
      emit(pattern.slice(i, end), i, end);
      i = end;
      continue;
    } else if (char === ']' && inClass && !wasFirst) {
      inClass = false;
      emit(char, i, i + 1);
    } else {
      emit(char, i, i + char.length);
    }
    i += char.length;
  }
  return out;
}

/** An escape at `at`, in or out of a class; returns its length in the pattern. */
function escape(pattern: string, at: number, inClass: boolean, emit: (text: string, from: number, to: number) => void, quote: () => void): number {
  const letter = pattern[at + 1];
  if (letter === undefined) {
    emit('\\', at, at + 1);
    return 1;
  }
  if (letter === 'Q' && !inClass) {
    quote();
    return 2;
  }
  if (letter === 'C' && !inClass) {
    // RE2's \C is one byte of the UTF-8 text, which can split a character; one character is what a link can hold.
    emit('(?s:.)', at, at + 2);
    return 2;
  }
  if (letter === 'c' || letter === 'u') {
    // RE2 refuses both; something other than a letter or digit after them keeps the binding from reading `\cA` or `\u0041`.
    emit(`\\${letter}(?:)`, at, at + 2);
    return 2;
  }
  if ((letter === 'p' || letter === 'P') && pattern[at + 2] === '{' && pattern[at + 3] !== '^') {
    const close = pattern.indexOf('}', at + 3);
    if (close >= 0) {
      // \p{Name} is \P{^Name} to RE2; a name starting with `^` is one the binding does not rename.
      emit(`\\${letter === 'p' ? 'P' : 'p'}{^${pattern.slice(at + 3, close)}}`, at, close + 1);
      return close + 1 - at;
    }
  }
  const char = String.fromCodePoint(pattern.codePointAt(at + 1)!);
  emit(`\\${char}`, at, at + 1 + char.length);
  return 1 + char.length;
}

/** The name of a group whose name starts at `at`: up to the next `>`. */
function nameAt(pattern: string, at: number): string {
  const end = pattern.indexOf('>', at);
  return end < 0 ? pattern.slice(at) : pattern.slice(at, end);
}

/**
 * RE2's error ("missing ): (foo"), with the part of the pattern it quotes as the administrator wrote it. The
 * binding refuses a repeated group name (RE2 would keep the first) without naming it; here it is named.
 */
function originalWording(message: string, pattern: string, rewritten: Rewritten): string {
  if (message === 'duplicate capture group name') {
    const repeated = rewritten.names.find((name, i) => rewritten.names.indexOf(name) < i);
    return repeated === undefined ? message : `${message}: ${repeated}`;
  }
  const colon = message.indexOf(': ');
  if (colon < 0) return message;
  const quoted = message.slice(colon + 2);
  const at = rewritten.source.indexOf(quoted);
  if (at < 0 || quoted === '') return message;
  const end = at + quoted.length;
  const from = at === 0 ? 0 : rewritten.starts[at]!;
  const to = end === rewritten.source.length ? pattern.length : rewritten.ends[end - 1]!;
  return `${message.slice(0, colon)}: ${pattern.slice(from, to)}`;
}
