import { avatar, h } from '../dom.ts';
import type { Model } from '../model.ts';
import { emojiFace } from './emoji-picker.ts';

interface Suggestion {
  label: string;
  detail: string;
  /** what replaces the typed trigger and query */
  insert: string;
  face: Node | null;
}

/** Suggestions shown at once. */
const SHOWN = 8;

/**
 * What is being typed just before the caret: `@bo` (a person), `#gen` (a channel), `:roc` (an emoji). Names
 * hold spaces, so `@bob ma` still looks for Bob Marsh; a finished mention (`@**Bob Marsh**`) matches nothing.
 */
const TRIGGER = /(?:^|[\s(])([@#])(?:\*\*)?([^@#*\n]{0,40})$|(?:^|[\s(]):([a-z0-9_+-]{2,})$/i;

/**
 * `@` mention, `#` channel and `:` emoji completion for a textarea, as a listbox under it: arrows move,
 * Enter or Tab take the suggestion, Escape closes; the textarea points at the suggestion (aria-activedescendant).
 */
export class Autocomplete {
  readonly element = h('ul', { class: 'autocomplete', role: 'listbox', id: 'compose-autocomplete', 'aria-label': 'Suggestions', hidden: true });
  private suggestions: Suggestion[] = [];
  private active = 0;
  /** where the trigger starts in the text */
  private start = 0;

  constructor(private readonly text: HTMLTextAreaElement, private readonly model: Model, private readonly changed: () => void) {
    // A textbox that controls a listbox (aria-expanded is a combobox's, and a combobox cannot be multi-line).
    text.setAttribute('aria-autocomplete', 'list');
    text.setAttribute('aria-controls', this.element.id);
    text.addEventListener('input', () => this.update());
    text.addEventListener('blur', () => setTimeout(() => this.close(), 150));
  }

  /** A key pressed in the textarea: true if it was the list's (the compose box must not send on it). */
  handleKey(event: KeyboardEvent): boolean {
    if (this.element.hidden) return false;
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      this.active = (this.active + (event.key === 'ArrowDown' ? 1 : -1) + this.suggestions.length) % this.suggestions.length;
      this.draw();
    } else if ((event.key === 'Enter' && !event.ctrlKey && !event.metaKey) || event.key === 'Tab') {
      this.choose(this.active);
    } else if (event.key === 'Escape') {
      this.close();
    } else return false;
    event.preventDefault();
    event.stopPropagation();
    return true;
  }

  close(): void {
    this.element.hidden = true;
    this.text.removeAttribute('aria-activedescendant');
  }

  private update(): void {
    const before = this.text.value.slice(0, this.text.selectionStart);
    const match = TRIGGER.exec(before);
    if (!match) return this.close();
    const [whole, trigger, query = '', emoji] = match;
    this.start = match.index + (/^[\s(]/.test(whole) ? 1 : 0);
    this.suggestions = emoji !== undefined ? this.emoji(emoji) : trigger === '@' ? this.people(query) : this.channels(query);
    if (!this.suggestions.length) return this.close();
    this.active = 0;
    this.draw();
  }

  private people(query: string): Suggestion[] {
    const words = query.toLowerCase().split(/\s+/).filter(Boolean);
    const users = [...this.model.users.values()].filter((user) => user.is_active);
    const sameName = (name: string) => users.filter((user) => user.full_name === name).length > 1;
    return users
      .filter((user) => user.user_id !== this.model.me.userId && words.every((word) => user.full_name.toLowerCase().includes(word) || user.email.toLowerCase().startsWith(word)))
      .sort((a, b) => a.full_name.localeCompare(b.full_name))
      .slice(0, SHOWN)
      // Two people of one name are told apart by id, as the original's syntax allows.
      .map((user) => ({ label: user.full_name, detail: user.email, insert: `@**${user.full_name}${sameName(user.full_name) ? `|${user.user_id}` : ''}** `, face: avatar(user.user_id, user.full_name, 'small') }));
  }

  private channels(query: string): Suggestion[] {
    const lower = query.toLowerCase().trim();
    return this.model.channels()
      .filter((sub) => sub.name.toLowerCase().includes(lower))
      .sort((a, b) => Number(!a.name.toLowerCase().startsWith(lower)) - Number(!b.name.toLowerCase().startsWith(lower)))
      .slice(0, SHOWN)
      .map((sub) => ({ label: `#${sub.name}`, detail: sub.description, insert: `#**${sub.name}** `, face: null }));
  }

  private emoji(query: string): Suggestion[] {
    return this.model.emoji.search(query, SHOWN).map((choice) => ({ label: `:${choice.name}:`, detail: '', insert: `:${choice.name}: `, face: emojiFace(choice) }));
  }

  private choose(index: number): void {
    const suggestion = this.suggestions[index];
    if (!suggestion) return;
    const caret = this.text.selectionStart;
    const value = this.text.value;
    this.text.value = value.slice(0, this.start) + suggestion.insert + value.slice(caret);
    const at = this.start + suggestion.insert.length;
    this.text.setSelectionRange(at, at);
    this.close();
    this.text.focus();
    this.changed();
  }

  private draw(): void {
    this.element.replaceChildren(...this.suggestions.map((suggestion, index) => h('li', {
      id: `compose-suggestion-${index}`,
      role: 'option',
      class: 'suggestion',
      'aria-selected': String(index === this.active),
      // mousedown, not click: the textarea must keep its focus and caret.
      onmousedown: (event: Event) => {
        event.preventDefault();
        this.choose(index);
      },
    }, suggestion.face, h('span', { class: 'suggestion-label' }, suggestion.label), suggestion.detail ? h('span', { class: 'suggestion-detail' }, suggestion.detail) : null)));
    this.element.hidden = false;
    this.text.setAttribute('aria-activedescendant', `compose-suggestion-${this.active}`);
  }
}
