import { h } from '../dom.ts';
import { glyphOf, type EmojiCatalog, type EmojiChoice } from '../emoji.ts';

/** A picker holds this many emoji at once; typing narrows them down. */
const SHOWN = 120;

/**
 * A pop-up to choose an emoji by name: a search box over a grid, custom emoji included. One instance serves
 * the compose box and reactions. Escape or a click elsewhere closes it; focus returns where it was.
 */
export class EmojiPicker {
  private readonly search = h('input', { type: 'search', class: 'picker-search', 'aria-label': 'Search emoji', placeholder: 'Search emoji' });
  private readonly grid = h('div', { class: 'picker-grid', role: 'listbox', 'aria-label': 'Emoji' });
  private readonly element = h('div', { class: 'emoji-picker', role: 'dialog', 'aria-label': 'Choose an emoji', hidden: true }, this.search, this.grid);
  private pick: ((choice: EmojiChoice) => void) | null = null;
  private returnFocus: HTMLElement | null = null;

  constructor(private readonly catalog: EmojiCatalog, private readonly emojiDataUrl: () => string) {
    document.body.append(this.element);
    this.search.addEventListener('input', () => this.fill());
    this.search.addEventListener('keydown', (event) => {
      if (event.key === 'Enter') {
        event.preventDefault();
        this.grid.querySelector<HTMLButtonElement>('button')?.click();
      } else if (event.key === 'ArrowDown') {
        event.preventDefault();
        this.grid.querySelector<HTMLButtonElement>('button')?.focus();
      }
    });
    this.element.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') {
        event.stopPropagation();
        this.close();
      }
    });
    document.addEventListener('mousedown', (event) => {
      if (!this.element.hidden && !this.element.contains(event.target as Node)) this.close();
    });
  }

  get isOpen(): boolean {
    return !this.element.hidden;
  }

  /** Opens beside `anchor`; `pick` gets the chosen emoji. */
  open(anchor: HTMLElement, pick: (choice: EmojiChoice) => void): void {
    this.pick = pick;
    this.returnFocus = document.activeElement instanceof HTMLElement ? document.activeElement : anchor;
    this.search.value = '';
    this.element.hidden = false;
    const box = anchor.getBoundingClientRect();
    const width = Math.min(320, innerWidth - 16);
    this.element.style.width = `${width}px`;
    this.element.style.left = `${Math.max(8, Math.min(box.right - width, innerWidth - width - 8))}px`;
    const below = box.bottom + 320 < innerHeight;
    this.element.style.top = below ? `${box.bottom + 4}px` : '';
    this.element.style.bottom = below ? '' : `${innerHeight - box.top + 4}px`;
    this.fill();
    void this.catalog.load(this.emojiDataUrl()).then(() => this.isOpen && this.fill());
    this.search.focus();
  }

  close(): void {
    if (this.element.hidden) return;
    this.element.hidden = true;
    this.pick = null;
    this.returnFocus?.focus();
  }

  private fill(): void {
    const choices = this.catalog.search(this.search.value, SHOWN);
    this.grid.replaceChildren(...choices.map((choice) => h('button', {
      type: 'button', class: 'picker-emoji', role: 'option', 'aria-label': choice.name.replace(/_/g, ' '), title: `:${choice.name}:`,
      onclick: () => {
        const pick = this.pick;
        this.close();
        pick?.(choice);
      },
    }, emojiFace(choice))));
    if (!choices.length) this.grid.append(h('p', { class: 'picker-empty' }, 'No emoji match.'));
  }
}

/** How an emoji is drawn: its glyph, or a custom emoji's image. */
export function emojiFace(choice: Pick<EmojiChoice, 'type' | 'code' | 'name' | 'url'>): Node {
  if (choice.type === 'realm_emoji' && choice.url) return h('img', { class: 'emoji', src: choice.url, alt: `:${choice.name}:` });
  return document.createTextNode(glyphOf(choice.code) ?? `:${choice.name}:`);
}
