import { glyphOf } from '../emoji.ts';
import { narrowFromHash, type Narrow } from '../narrow.ts';

/** Where a link or mention in rendered content leads inside the client. */
export interface ContentActions {
  open(narrow: Narrow): void;
  /** uploaded files, which need the user's credentials: absent where content links none (a description) */
  uploads?: Uploads;
}

export interface Uploads {
  /** an object URL of the file's bytes, for an inline preview */
  image(path: string): Promise<string>;
  /** opens the file in a new tab, through a link that works without credentials */
  openFile(path: string): void;
}

/** Uploads whose links get an inline preview, by extension (the original previews these types). */
const IMAGE_FILE = /\.(?:png|jpe?g|gif|webp|avif|bmp)$/i;

/**
 * Server-rendered HTML (a message, a channel description) made live: Unicode emoji drawn from their class
 * names, spoilers that open on click, and channel links and mentions that open in the client. Other links
 * open beside the chat, never in place of it.
 */
export function renderContent(target: HTMLElement, html: string, actions: ContentActions): HTMLElement {
  target.innerHTML = html;
  for (const span of target.querySelectorAll<HTMLElement>('span.emoji')) {
    const glyph = emojiFromClass(span.className);
    if (glyph) span.textContent = glyph;
  }
  for (const block of target.querySelectorAll<HTMLElement>('.spoiler-block')) spoiler(block);
  typesetLazily(target);
  for (const anchor of target.querySelectorAll('a')) {
    const narrow = linkNarrow(anchor);
    const upload = uploadPath(anchor);
    if (upload && actions.uploads) {
      const uploads = actions.uploads;
      anchor.addEventListener('click', (event) => {
        event.preventDefault();
        uploads.openFile(upload);
      });
      if (IMAGE_FILE.test(upload)) inlineImage(anchor, upload, uploads);
    } else if (messageLinkHash(anchor)) {
      // A link to a message (`#narrow/.../near/42`): the page's hash handler opens it at that message.
      const hash = messageLinkHash(anchor)!;
      anchor.addEventListener('click', (event) => {
        event.preventDefault();
        location.hash = hash;
      });
    } else if (narrow) {
      anchor.addEventListener('click', (event) => {
        event.preventDefault();
        actions.open(narrow);
      });
    } else {
      anchor.target = '_blank';
      anchor.rel = 'noopener noreferrer';
    }
  }
  for (const mention of target.querySelectorAll<HTMLElement>('.user-mention[data-user-id]')) {
    const userId = Number(mention.dataset.userId);
    if (!Number.isInteger(userId)) continue;
    mention.setAttribute('role', 'link');
    mention.tabIndex = 0;
    mention.title = `Direct messages with ${mention.textContent?.replace(/^@/, '')}`;
    const go = () => actions.open({ kind: 'dm', userIds: [userId] });
    mention.addEventListener('click', go);
    mention.addEventListener('keydown', (event) => event.key === 'Enter' && go());
  }
  return target;
}

/**
 * Math and code are typeset by KaTeX and highlight.js, each a chunk of its own fetched with the first
 * message that needs it: most pages never load them. If a chunk cannot be had, the source stays as sent.
 */
function typesetLazily(target: HTMLElement): void {
  const math = [...target.querySelectorAll<HTMLElement>('span.katex')].filter((span) => !span.firstElementChild);
  if (math.length) void import('../lazy/math.ts').then((module) => module.typeset(math), () => {});
  const code = [...target.querySelectorAll<HTMLElement>('div.codehilite[data-code-language]')];
  if (code.length) void import('../lazy/code.ts').then((module) => module.highlight(code), () => {});
}

/** The hash of a link to a message in this client (relative, or absolute on this server); null otherwise. */
function messageLinkHash(anchor: HTMLAnchorElement): string | null {
  let url: URL;
  try {
    url = new URL(anchor.getAttribute('href') ?? '', location.href);
  } catch {
    return null;
  }
  return url.origin === location.origin && url.pathname === '/' && /^#narrow\/.*\/(?:near|with)\/\d+$/.test(url.hash) ? url.hash : null;
}

/** `/user_uploads/2/ab/cd/photo.png`, relative or on this server; null for any other link. */
function uploadPath(anchor: HTMLAnchorElement): string | null {
  let url: URL;
  try {
    url = new URL(anchor.getAttribute('href') ?? '', location.origin);
  } catch {
    return null;
  }
  return url.origin === location.origin && url.pathname.startsWith('/user_uploads/') ? url.pathname : null;
}

/**
 * A preview under the paragraph of an uploaded image's link, as the original shows `message_inline_image`.
 * The bytes are fetched with the user's credentials (an <img> could not send them) and shown from a blob.
 */
function inlineImage(anchor: HTMLAnchorElement, path: string, uploads: Uploads): void {
  const name = anchor.textContent?.trim() || path.split('/').pop() || 'image';
  const image = document.createElement('img');
  image.alt = name;
  image.loading = 'lazy';
  const link = document.createElement('a');
  link.href = path;
  link.title = name;
  link.setAttribute('aria-label', `Open ${name}`);
  link.append(image);
  link.addEventListener('click', (event) => {
    event.preventDefault();
    uploads.openFile(path);
  });
  const preview = document.createElement('div');
  preview.className = 'message_inline_image';
  preview.append(link);
  // After the paragraph, and after the previews of its earlier links: in the order of the links.
  let before: Element = anchor.closest('p, li') ?? anchor;
  while (before.nextElementSibling?.classList.contains('message_inline_image')) before = before.nextElementSibling;
  before.after(preview);
  uploads.image(path).then((url) => (image.src = url), () => preview.remove());
}

/** `emoji emoji-1f468-200d-1f4bb` → the code points it names; null for anything else. */
export function emojiFromClass(className: string): string | null {
  const code = /(?:^|\s)emoji-([0-9a-f]+(?:-[0-9a-f]+)*)(?:\s|$)/.exec(className)?.[1];
  return code ? glyphOf(code) : null;
}

/** The header opens and closes the hidden content, by mouse or keyboard. */
function spoiler(block: HTMLElement): void {
  const header = block.querySelector<HTMLElement>('.spoiler-header');
  const content = block.querySelector<HTMLElement>('.spoiler-content');
  if (!header || !content) return;
  if (!header.textContent?.trim()) header.textContent = 'Spoiler';
  header.setAttribute('role', 'button');
  header.setAttribute('aria-expanded', 'false');
  header.tabIndex = 0;
  const toggle = () => {
    const open = block.classList.toggle('open');
    header.setAttribute('aria-expanded', String(open));
    content.setAttribute('aria-hidden', String(!open));
  };
  header.addEventListener('click', toggle);
  header.addEventListener('keydown', (event) => {
    if (event.key !== 'Enter' && event.key !== ' ') return;
    event.preventDefault();
    toggle();
  });
}

/** The server's channel and topic links (`/#narrow/channel/7-general/topic/lunch`) as a narrow. */
function linkNarrow(anchor: HTMLAnchorElement): Narrow | null {
  const href = anchor.getAttribute('href') ?? '';
  return href.startsWith('/#narrow/') ? narrowFromHash(href.slice(1)) : null;
}
