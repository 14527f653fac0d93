/** A code playground: where a code block of a language can be opened, offered by clients beside the block. */
export interface Playground {
  id: number;
  /** shown to pick among several playgrounds of one language */
  name: string;
  /** the Pygments lexer name of the code blocks it takes */
  pygmentsLanguage: string;
  /** an RFC 6570 template whose only variable is `code` */
  urlTemplate: string;
}

/**
 * The realm's playgrounds, in the order they were added. Replaced whole by every change, never edited in
 * place: a snapshot record may share it. Snapshots written before playgrounds existed load with none
 * (the realm's empty default).
 */
export interface PlaygroundStore {
  list: readonly Playground[];
  nextId: number;
}

export const emptyPlaygroundStore = (): PlaygroundStore => ({ list: [], nextId: 1 });
