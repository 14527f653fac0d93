import type { RealmState } from '../state.ts';
import type { PlaygroundChange } from './changes.ts';

export function applyPlaygroundChange(state: RealmState, change: PlaygroundChange): void {
  const { list, nextId } = state.playgrounds;
  switch (change.type) {
    case 'playground.added':
      state.playgrounds = { list: [...list, { ...change.playground }], nextId: Math.max(nextId, change.playground.id + 1) };
      break;
    case 'playground.removed':
      state.playgrounds = { list: list.filter((playground) => playground.id !== change.id), nextId };
      break;
    default: {
      const unknown: never = change;
      throw new Error(`unknown playground change ${JSON.stringify(unknown)}`);
    }
  }
}
