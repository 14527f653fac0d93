/**
 * RFC 6570 URI templates, as linkifiers use them: `https://example.com/{org}/{repo}/issues/{id}`, and the
 * operators of the higher levels (`{+path}`, `{#fragment}`, `{.domain}`, `{/segment}`, `{;param}`,
 * `{?query,more}`, `{&more}`, prefixes `{id:5}` and explode `{list*}`). Values are the text of a pattern's
 * groups, so only string values are expanded; a group that took no part in the match is undefined.
 */

interface VarSpec {
  name: string;
  /** `{var:3}`: at most this many characters of the value */
  prefix: number | null;
}

interface Operator {
  first: string;
  separator: string;
  /** `;`, `?` and `&` write `name=value` */
  named: boolean;
  /** what follows a named variable whose value is empty */
  ifEmpty: string;
  /** `+` and `#` keep reserved characters and percent-encoded triplets as they are */
  allowReserved: boolean;
}

type Part = string | { operator: Operator; vars: VarSpec[] };

export interface UriTemplate {
  parts: Part[];
  /** the variable names the template uses */
  names: Set<string>;
}

const OPERATORS: Record<string, Operator> = {
  '': { first: '', separator: ',', named: false, ifEmpty: '', allowReserved: false },
  '+': { first: '', separator: ',', named: false, ifEmpty: '', allowReserved: true },
  '#': { first: '#', separator: ',', named: false, ifEmpty: '', allowReserved: true },
  '.': { first: '.', separator: '.', named: false, ifEmpty: '', allowReserved: false },
  '/': { first: '/', separator: '/', named: false, ifEmpty: '', allowReserved: false },
  ';': { first: ';', separator: ';', named: true, ifEmpty: '', allowReserved: false },
  '?': { first: '?', separator: '&', named: true, ifEmpty: '=', allowReserved: false },
  '&': { first: '&', separator: '&', named: true, ifEmpty: '=', allowReserved: false },
};

// varname = varchar *( ["."] varchar ), varchar = ALPHA / DIGIT / "_" / pct-encoded; then `:max-length` or `*`.
const VAR_SPEC = /^((?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})+(?:\.(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})+)*)(?::([1-9][0-9]{0,3})|(\*))?$/;

/** The template's parts, or null when it is not a valid template. */
export function parseUriTemplate(template: string): UriTemplate | null {
  const parts: Part[] = [];
  const names = new Set<string>();
  let literal = '';
  for (let at = 0; at < template.length; ) {
    const char = template[at]!;
    if (char === '}') return null;
    if (char !== '{') {
      literal += char;
      at++;
      continue;
    }
    const end = template.indexOf('}', at);
    if (end < 0) return null;
    let body = template.slice(at + 1, end);
    if (body.includes('{')) return null;
    const symbol = body[0] !== undefined && body[0] in OPERATORS ? body[0] : '';
    body = body.slice(symbol.length);
    if (body === '') return null;
    const vars: VarSpec[] = [];
    for (const spec of body.split(',')) {
      const match = VAR_SPEC.exec(spec);
      if (!match) return null;
      vars.push({ name: match[1]!, prefix: match[2] === undefined ? null : Number(match[2]) });
      names.add(match[1]!);
    }
    if (literal) parts.push(literal);
    literal = '';
    parts.push({ operator: OPERATORS[symbol]!, vars });
    at = end + 1;
  }
  if (literal) parts.push(literal);
  return { parts, names };
}

/** The URL for these values; undefined values are left out, as the RFC has it. */
export function expandUriTemplate(template: UriTemplate, values: Readonly<Record<string, string | undefined>>): string {
  let out = '';
  for (const part of template.parts) {
    if (typeof part === 'string') {
      out += part;
      continue;
    }
    const { operator } = part;
    const pieces: string[] = [];
    for (const spec of part.vars) {
      const value = values[spec.name];
      if (value === undefined) continue;
      const text = spec.prefix === null ? value : [...value].slice(0, spec.prefix).join('');
      const encoded = encode(text, operator.allowReserved);
      if (!operator.named) pieces.push(encoded);
      else pieces.push(text === '' ? `${spec.name}${operator.ifEmpty}` : `${spec.name}=${encoded}`);
    }
    if (pieces.length) out += operator.first + pieces.join(operator.separator);
  }
  return out;
}

const UNRESERVED = /[A-Za-z0-9\-._~]/;
const RESERVED = /[:/?#[\]@!$&'()*+,;=]/;

function encode(text: string, allowReserved: boolean): string {
  let out = '';
  for (let at = 0; at < text.length; ) {
    const char = String.fromCodePoint(text.codePointAt(at)!);
    if (allowReserved && char === '%' && /^%[0-9A-Fa-f]{2}/.test(text.slice(at))) {
      out += text.slice(at, at + 3);
      at += 3;
      continue;
    }
    out += UNRESERVED.test(char) || (allowReserved && RESERVED.test(char)) ? char : percentEncode(char);
    at += char.length;
  }
  return out;
}

/** UTF-8 percent-encoding of one character (a lone surrogate becomes U+FFFD, as Buffer writes it). */
function percentEncode(char: string): string {
  const bytes = Buffer.from(char, 'utf8');
  return [...bytes].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('');
}
