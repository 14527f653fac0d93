import { h } from './dom.ts';
import { showDialog } from './views/dialog.ts';

export interface ShortcutActions {
  search(): void;
  newTopic(): void;
  newDirect(): void;
  nextUnreadTopic(): void;
  nextUnreadDirect(): void;
  inbox(): void;
  recent(): void;
  starred(): void;
}

/** Zulip's main keyboard shortcuts, with the key each is known by there. */
const SHORTCUTS: { key: string; label: string; run: keyof ShortcutActions }[] = [
  { key: '/', label: 'Search messages', run: 'search' },
  { key: 'c', label: 'New topic (compose)', run: 'newTopic' },
  { key: 'x', label: 'New direct message', run: 'newDirect' },
  { key: 'n', label: 'Next unread topic', run: 'nextUnreadTopic' },
  { key: 'p', label: 'Next unread direct message', run: 'nextUnreadDirect' },
  { key: 'I', label: 'Inbox (Shift+I)', run: 'inbox' },
  { key: 't', label: 'Recent conversations', run: 'recent' },
  { key: '*', label: 'Starred messages', run: 'starred' },
];

/**
 * Single keys, as in Zulip's web app, when no text field has the focus and no dialog is open; `?` lists them.
 */
export function listenForShortcuts(actions: ShortcutActions): () => void {
  const onKey = (event: KeyboardEvent) => {
    if (event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
    const target = event.target as HTMLElement | null;
    if (target?.closest('input, textarea, select, [contenteditable="true"], dialog')) return;
    if (event.key === '?') {
      event.preventDefault();
      void showDialog('Keyboard shortcuts', [h('dl', { class: 'shortcut-list' }, SHORTCUTS.flatMap((shortcut) => [h('dt', {}, h('kbd', {}, shortcut.key)), h('dd', {}, shortcut.label)]))]);
      return;
    }
    const shortcut = SHORTCUTS.find((candidate) => candidate.key === event.key);
    if (!shortcut) return;
    event.preventDefault();
    actions[shortcut.run]();
  };
  document.addEventListener('keydown', onKey);
  return () => document.removeEventListener('keydown', onKey);
}
