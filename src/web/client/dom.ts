/** A tiny element builder: no framework, just typed DOM calls. */

type Child = Node | string | number | null | undefined | false;
type Handler = (event: Event) => void;
export type Attrs = Record<string, string | number | boolean | null | undefined | Handler>;

/** `h('button', { class: 'x', 'aria-label': 'Send', onclick: send }, 'Send')`; false/null attributes are left out. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: (Child | Child[])[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.slice(2), value);
    else if (name === 'value' && 'value' in element) (element as HTMLInputElement).value = String(value);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, children);
  return element;
}

function append(parent: Node, children: (Child | Child[])[]): void {
  for (const child of children) {
    if (Array.isArray(child)) append(parent, child);
    else if (child === null || child === undefined || child === false) continue;
    else parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

/**
 * Makes `parent`'s children exactly `wanted`, moving only nodes that are out of place: unchanged nodes stay
 * put, so a focused editor inside one keeps its focus and caret when messages arrive around it.
 */
export function reconcile(parent: Element, wanted: readonly Node[]): void {
  let cursor = parent.firstChild;
  for (const node of wanted) {
    if (node === cursor) {
      cursor = cursor.nextSibling;
      continue;
    }
    parent.insertBefore(node, cursor);
  }
  while (cursor) {
    const next = cursor.nextSibling;
    parent.removeChild(cursor);
    cursor = next;
  }
}

/** Initials for an avatar: "Ada Lovelace" → "AL". */
export function initials(name: string): string {
  const words = name.trim().split(/\s+/).filter(Boolean);
  const letters = words.length > 1 ? [words[0]![0], words[words.length - 1]![0]] : [...(words[0] ?? '?')].slice(0, 2);
  return letters.join('').toUpperCase();
}

/** A stable hue per user, so a person keeps one colour everywhere. */
export function hueFor(id: number): number {
  return (id * 137) % 360;
}

/** Uploaded pictures by user id; everyone else shows their initials (drawn here, not fetched). */
export const uploadedAvatars = new Map<number, string>();

/** The server draws default avatars under this path; any other URL is an uploaded picture. */
const DEFAULT_AVATAR_PATH = '/user_avatars/default/';

export function noteAvatar(user: { user_id: number; avatar_url?: string | null }): void {
  if (user.avatar_url && !user.avatar_url.includes(DEFAULT_AVATAR_PATH)) uploadedAvatars.set(user.user_id, user.avatar_url);
  else uploadedAvatars.delete(user.user_id);
}

/** The user's clock: `hour12: false` for twenty-four-hour time, else the locale's way. */
export const clock: { hour12: boolean | undefined } = { hour12: undefined };

/** A time of day as the user likes to read it ("14:05" or "2:05 PM"). */
export const timeOfDay = (time: Date, timeZone?: string) => time.toLocaleTimeString([], { hour: 'numeric', minute: '2-digit', hour12: clock.hour12, timeZone });

export function avatar(id: number, name: string, size: 'small' | 'large' = 'large'): HTMLElement {
  const uploaded = uploadedAvatars.get(id);
  if (uploaded) return h('img', { class: `avatar avatar-${size} avatar-image`, src: uploaded, alt: '', 'aria-hidden': 'true', loading: 'lazy' });
  return h('span', { class: `avatar avatar-${size}`, style: `--hue: ${hueFor(id)}`, 'aria-hidden': 'true' }, initials(name));
}
