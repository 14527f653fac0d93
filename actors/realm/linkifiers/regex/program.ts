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
  return { instructions: out, slots: (parsed.groups + 1) * 2, names: parsed.names };
}

type Emit = (instruction: Instruction) => number;

function compileNode(node: Node, emit: Emit, out: Instruction[]): void {
  switch (node.kind) {
    case 'empty':
      return;
    case 'char':
      emit({ op: 'char', test: node.test });
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
