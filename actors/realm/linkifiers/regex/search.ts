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
  return new Machine(program, text, from, options).run();
}

class Machine {
  /** per instruction, the step at which a thread last reached it: one thread per instruction per step */
  private readonly seen: Int32Array;
  private step = 0;

  constructor(
    private readonly program: Program,
    private readonly text: string,
    private readonly from: number,
    private readonly options: SearchOptions,
  ) {
    this.seen = new Int32Array(program.instructions.length).fill(-1);
  }

  run(): Slots | null {
    const { text, program } = this;
    const { first } = program;
    const initial = new Array<number>(program.slots).fill(-1);
    let matched: number[] | null = null;
    let current: Thread[] = [];
    for (let at = this.from; ; ) {
      // With nothing under way, no match can begin before the next character a match begins with.
      if (current.length === 0 && first && !matched) {
        for (let code = text.codePointAt(at); code !== undefined && !first(code); code = text.codePointAt(at)) at += code > 0xffff ? 2 : 1;
        if (at >= text.length) break;
      }
      // A new attempt starts at each position, after (below) the attempts already under way.
      if (!matched) this.add(current, 0, at, initial);
      if (current.length === 0 && (matched || at >= text.length)) break;
      const code = at < text.length ? text.codePointAt(at)! : -1;
      const width = code > 0xffff ? 2 : 1;
      const next: Thread[] = [];
      this.step++;
      for (const thread of current) {
        const instruction = program.instructions[thread.pc]!;
        if (instruction.op === 'match') {
          matched = thread.slots;
          // Threads after this one have lower priority: their matches would not be chosen.
          break;
        }
        if (instruction.op === 'char' && code >= 0 && instruction.test(code)) this.add(next, thread.pc + 1, at + width, thread.slots);
      }
      if (at >= text.length) break;
      current = next;
      at += width;
    }
    return matched;
  }

  /**
   * Follows jumps, splits, saves and assertions from `pc` depth first (first branch first: the priority
   * order), adding the threads that wait for a character (or match) to `list`. An explicit stack: a
   * recursion as deep as a long program could exhaust the call stack.
   */
  private add(list: Thread[], pc: number, at: number, slots: number[]): void {
    const { instructions } = this.program;
    const stack: Thread[] = [{ pc, slots }];
    for (let thread = stack.pop(); thread; thread = stack.pop()) {
      if (this.seen[thread.pc] === this.step) continue;
      this.seen[thread.pc] = this.step;
      const instruction = instructions[thread.pc]!;
      switch (instruction.op) {
        case 'jump':
          stack.push({ pc: instruction.to, slots: thread.slots });
          break;
        case 'split':
          stack.push({ pc: instruction.second, slots: thread.slots }, { pc: instruction.first, slots: thread.slots });
          break;
        case 'save': {
          const copy = thread.slots.slice();
          copy[instruction.slot] = at;
          stack.push({ pc: thread.pc + 1, slots: copy });
          break;
        }
        case 'assert':
          if (holds(instruction.what, this.text, at, this.from, this.options)) stack.push({ pc: thread.pc + 1, slots: thread.slots });
          break;
        default:
          list.push(thread);
      }
    }
  }
}

function holds(what: Assertion, text: string, at: number, from: number, options: SearchOptions): boolean {
  const atStart = at === 0 && options.atTextStart;
  if (typeof what === 'object') {
    if ('followedBy' in what) return at === text.length || what.followedBy(text.codePointAt(at)!);
    // As if the delimiter were matched as part of the search, which starts at `from`.
    return at > from ? what.precededBy(codePointBefore(text, at)) : atStart;
  }
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

function codePointBefore(text: string, at: number): number {
  const low = text.charCodeAt(at - 1);
  if (low >= 0xdc00 && low <= 0xdfff && at >= 2) {
    const high = text.charCodeAt(at - 2);
    if (high >= 0xd800 && high <= 0xdbff) return (high - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000;
  }
  return low;
}
