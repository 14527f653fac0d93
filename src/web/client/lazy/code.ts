import hljs from 'highlight.js/lib/common';

/**
 * Highlights the server's code blocks (`<div class="codehilite" data-code-language="py">`) with
 * highlight.js's common languages; a block in a language it does not know stays plain, as in the original.
 */
export function highlight(blocks: readonly HTMLElement[]): void {
  for (const block of blocks) {
    const code = block.querySelector('code');
    const language = block.dataset.codeLanguage ?? '';
    if (!code || !hljs.getLanguage(language)) continue;
    code.innerHTML = hljs.highlight(code.textContent ?? '', { language, ignoreIllegals: true }).value;
    code.classList.add('hljs');
  }
}
