import { narrowFromHash, type Narrow } from '../narrow.ts';

/** Where a link or mention in rendered content leads inside the client. */
export interface ContentActions {
  open(narrow: Narrow): void;
}

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
  for (const anchor of target.querySelectorAll('a')) {
    const narrow = linkNarrow(anchor);
    if (narrow) {
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

/** `emoji emoji-1f468-200d-1f4bb` → the code points it names; null for anything else. */
export function emojiFromClass(className: string): string | null {
  const code = /(?:^|\s)emoji-([0-9a-f]+(?:-[0-9a-f]+)*)(?:\s|$)/.exec(className)?.[1];
  if (!code) return null;
  try {
    return String.fromCodePoint(...code.split('-').map((hex) => parseInt(hex, 16)));
  } catch {
    return null;
  }
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
