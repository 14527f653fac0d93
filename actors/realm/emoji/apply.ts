import type { RealmState } from '../state.ts';
import type { EmojiChange } from './changes.ts';
import { addEmoji } from './state.ts';

export function applyEmojiChange(state: RealmState, change: EmojiChange): void {
  const store = state.emoji;
  switch (change.type) {
    case 'emoji.added':
      addEmoji(store, { ...change.emoji });
      return;
    case 'emoji.deactivated': {
      const emoji = store.byId.get(change.id);
      if (!emoji) return;
      emoji.deactivated = true;
      if (store.activeByName.get(emoji.name) === emoji.id) store.activeByName.delete(emoji.name);
      return;
    }
  }
}
