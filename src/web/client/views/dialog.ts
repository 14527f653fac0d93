import { h } from '../dom.ts';

/**
 * A modal dialog (the platform's <dialog>: focus kept inside, Escape closes). Answers when it closes, with
 * the value of the button that closed it ('' for Escape or Cancel).
 */
export function showDialog(title: string, body: Node[], buttons: { label: string; value: string; primary?: boolean }[] = []): Promise<string> {
  const form = h('form', { method: 'dialog', class: 'dialog-form' },
    h('h2', { class: 'dialog-title' }, title),
    ...body,
    h('div', { class: 'dialog-buttons' },
      ...buttons.map((button) => h('button', { type: 'submit', value: button.value, class: button.primary ? 'primary small' : 'ghost small' }, button.label)),
      h('button', { type: 'submit', value: '', class: 'ghost small', formnovalidate: true }, buttons.length ? 'Cancel' : 'Close')));
  const dialog = h('dialog', { class: 'dialog', 'aria-label': title }, form);
  document.body.append(dialog);
  dialog.showModal();
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => {
      dialog.remove();
      resolve(dialog.returnValue);
    });
  });
}
