import { RegexSyntaxError, type Assertion, type CharTest, type Node, type Parsed } from './syntax.ts';

/**
 * A pattern compiled for the Pike VM of search.ts: one thread per instruction, so matching time is linear
 * in the text for a given program.
 */
export type Instruction =
  | { op: 'char'; test: CharTest }
  /** try `first`, then `second` (the order is the match priority) */
  | { op: 'split'; first: number; second: number }
  | { op: 'jump'; to: number }
  | { op: 'save'; slot: number }
  | { op: 'assert'; what: Assertion }
  | { op: 'match' };

export interface Program {
  instructions: Instruction[];
  /** two per group, and two for the whole match (slots 0 and 1) */
  slots: number;
  names: Map<string, number>;
  /**
   * The characters a match can begin with; null when a match can be empty. Where no attempt is under way,
   * the search skips to the next such character (most of a message, for most patterns).
   */
  first: CharTest | null;
}

/**
 * Counted repetitions are unrolled, so `(x{1000}){1000}` would be a million instructions; RE2 refuses such
 * patterns as too large, and so does this.
 */
const MAX_INSTRUCTIONS = 20_000;

export function compileRegex(parsed: Parsed): Program {
  const out: Instruction[] = [];
  const emit = (instruction: Instruction): number => {
    if (out.length >= MAX_INSTRUCTIONS) throw new RegexSyntaxError('pattern too large - compile failed');
    out.push(instruction);
    return out.length - 1;
  };
  emit({ op: 'save', slot: 0 });
  compileNode(parsed.root, emit, out);
  emit({ op: 'save', slot: 1 });
  emit({ op: 'match' });
  return { instructions: out, slots: (parsed.groups + 1) * 2, names: parsed.names, first: firstCharacters(out) };
}

/** The union of the character tests reachable from the start without consuming; null if `match` is too. */
function firstCharacters(instructions: readonly Instruction[]): CharTest | null {
  const tests: CharTest[] = [];
  const seen = new Set<number>();
  const stack = [0];
  while (stack.length) {
    const pc = stack.pop()!;
    if (seen.has(pc)) continue;
    seen.add(pc);
    const instruction = instructions[pc]!;
    switch (instruction.op) {
      case 'match':
        return null;
      case 'char':
        tests.push(instruction.test);
        break;
      case 'jump':
        stack.push(instruction.to);
        break;
      case 'split':
        stack.push(instruction.first, instruction.second);
        break;
      default:
        stack.push(pc + 1);
    }
  }
  return asciiTable((cp) => tests.some((test) => test(cp)));
}

/**
 * A character test with its answers for ASCII worked out once: the tests run for every character of every
 * message, and class tests (case folding, Unicode properties) are slow to compute each time.
 */
export function asciiTable(test: CharTest): CharTest {
  const table = new Uint8Array(128);
  for (let cp = 0; cp < 128; cp++) table[cp] = test(cp) ? 1 : 0;
  return (cp) => (cp < 128 ? table[cp] === 1 : test(cp));
}

type Emit = (instruction: Instruction) => number;

function compileNode(node: Node, emit: Emit, out: Instruction[]): void {
  switch (node.kind) {
    case 'empty':
      return;
    case 'char':
      emit({ op: 'char', test: asciiTable(node.test) });
      return;
    case 'assert':
      emit({ op: 'assert', what: node.what });
      return;
    case 'group':
      if (node.capture !== null) emit({ op: 'save', slot: node.capture * 2 });
      compileNode(node.body, emit, out);
      if (node.capture !== null) emit({ op: 'save', slot: node.capture * 2 + 1 });
      return;
    case 'concat':
      for (const item of node.items) compileNode(item, emit, out);
      return;
    case 'alt': {
      const jumps: number[] = [];
      node.items.forEach((item, i) => {
        if (i === node.items.length - 1) {
          compileNode(item, emit, out);
          return;
        }
        const split = emit({ op: 'split', first: out.length + 1, second: -1 });
        compileNode(item, emit, out);
        jumps.push(emit({ op: 'jump', to: -1 }));
        (out[split] as { second: number }).second = out.length;
      });
      for (const jump of jumps) (out[jump] as { to: number }).to = out.length;
      return;
    }
    case 'repeat':
      compileRepeat(node, emit, out);
      return;
  }
}

function compileRepeat(node: Extract<Node, { kind: 'repeat' }>, emit: Emit, out: Instruction[]): void {
  const { body, min, max, greedy } = node;
  const split = (here: number, taken: number, skipped: number) => {
    out[here] = greedy ? { op: 'split', first: taken, second: skipped } : { op: 'split', first: skipped, second: taken };
  };
  for (let i = 0; i < min; i++) compileNode(body, emit, out);
  if (max === Infinity) {
    const loop = emit({ op: 'jump', to: -1 });
    compileNode(body, emit, out);
    emit({ op: 'jump', to: loop });
    split(loop, loop + 1, out.length);
    return;
  }
  // Each optional copy is tried only after the one before it matched: x{1,3} is x(x(x)?)?.
  const splits: number[] = [];
  for (let i = min; i < max; i++) {
    splits.push(emit({ op: 'jump', to: -1 }));
    compileNode(body, emit, out);
  }
  for (const at of splits) split(at, at + 1, out.length);
}
