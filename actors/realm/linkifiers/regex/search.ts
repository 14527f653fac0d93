import type { Program } from './program.ts';
import { isAsciiWord, type Assertion } from './syntax.ts';

/** Where each group matched: [start, end] pairs as UTF-16 offsets, -1 where a group took no part. */
export type Slots = readonly number[];

export interface SearchOptions {
  /**
   * Whether offset 0 is the start of the text for `^` and `\A`. A piece of a larger text (a run of plain text
   * between two pieces of Markdown markup) says false.
   */
  atTextStart: boolean;
}

interface Thread {
  pc: number;
  slots: number[];
}

/**
 * The leftmost match at or after `from`, preferring alternatives and repetitions in the pattern's order (the
 * answer a backtracking engine gives), found by a Pike VM: every live thread advances one character at a
 * time, at most one thread per instruction, so the time is linear in the text.
 */
export function search(program: Program, text: string, from: number, options: SearchOptions): Slots | null {
  const { instructions } = program;
  // Per-instruction stamp of the last position a thread reached it at: one thread per instruction per step.
  const seen = new Int32Array(instructions.length).fill(-1);
  let stamp = 0;
  const initial = new Array<number>(program.slots).fill(-1);

  // Follows jumps, splits, saves and assertions depth first (first branch first: the priority order), with
  // an explicit stack, as a recursion as deep as a long program could exhaust the call stack.
  const add = (list: Thread[], startPc: number, at: number, startSlots: number[]): void => {
    const stack: Thread[] = [{ pc: startPc, slots: startSlots }];
    for (let thread = stack.pop(); thread; thread = stack.pop()) {
      const { pc, slots } = thread;
      if (seen[pc] === stamp) continue;
      seen[pc] = stamp;
      const instruction = instructions[pc]!;
      switch (instruction.op) {
        case 'jump':
          stack.push({ pc: instruction.to, slots });
          break;
        case 'split':
          stack.push({ pc: instruction.second, slots }, { pc: instruction.first, slots });
          break;
        case 'save': {
          const copy = slots.slice();
          copy[instruction.slot] = at;
          stack.push({ pc: pc + 1, slots: copy });
          break;
        }
        case 'assert':
          if (holds(instruction.what, text, at, options)) stack.push({ pc: pc + 1, slots });
          break;
        default:
          list.push(thread);
      }
    }
  };

  let matched: number[] | null = null;
  let current: Thread[] = [];
  for (let at = from; ; ) {
    // A new attempt starts at each position, after (below) the attempts already under way.
    if (!matched) add(current, 0, at, initial);
    if (current.length === 0 && (matched || at >= text.length)) break;
    const code = at < text.length ? text.codePointAt(at)! : -1;
    const width = code > 0xffff ? 2 : 1;
    const next: Thread[] = [];
    stamp++;
    for (const thread of current) {
      const instruction = instructions[thread.pc]!;
      if (instruction.op === 'match') {
        matched = thread.slots;
        // Threads after this one have lower priority: their matches would not be chosen.
        break;
      }
      if (instruction.op === 'char' && code >= 0 && instruction.test(code)) add(next, thread.pc + 1, at + width, thread.slots);
    }
    if (at >= text.length) break;
    current = next;
    at += width;
  }
  return matched;
}

function holds(what: Assertion, text: string, at: number, options: SearchOptions): boolean {
  const atStart = at === 0 && options.atTextStart;
  switch (what) {
    case 'text_start':
      return atStart;
    case 'text_end':
      return at === text.length;
    case 'line_start':
      return atStart || (at > 0 && text[at - 1] === '\n');
    case 'line_end':
      return at === text.length || text[at] === '\n';
    case 'word_boundary':
    case 'not_word_boundary': {
      const before = at > 0 && isAsciiWord(text.charCodeAt(at - 1));
      const after = at < text.length && isAsciiWord(text.charCodeAt(at));
      return (before !== after) === (what === 'word_boundary');
    }
  }
}
