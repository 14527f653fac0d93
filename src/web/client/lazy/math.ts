import katex from 'katex';

let styled = false;

/** KaTeX's sheet, built apart from the main one; index.html names it (src/web/build.ts). */
function loadStyle(): void {
  if (styled) return;
  styled = true;
  const href = document.querySelector<HTMLMetaElement>('meta[name="style-math"]')?.content;
  if (href) document.head.append(Object.assign(document.createElement('link'), { rel: 'stylesheet', href }));
}

/**
 * Typesets the server's `katex` spans, which hold TeX source. A displayed formula replaces its
 * `katex-display` wrapper, which KaTeX draws itself. Bad TeX is shown in red with KaTeX's message, not thrown.
 */
export function typeset(spans: readonly HTMLElement[]): void {
  loadStyle();
  for (const span of spans) {
    const wrapper = span.parentElement?.classList.contains('katex-display') ? span.parentElement : null;
    const holder = document.createElement('span');
    katex.render(span.textContent ?? '', holder, { displayMode: wrapper !== null, throwOnError: false, output: 'htmlAndMathml' });
    (wrapper ?? span).replaceWith(...holder.childNodes);
  }
}
