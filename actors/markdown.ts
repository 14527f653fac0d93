import MarkdownIt from 'markdown-it';

// Raw HTML in user text is escaped, never passed through; links open outside the app.
const renderer = new MarkdownIt({ html: false, linkify: true, breaks: true });

/** Renders user Markdown (descriptions, and later messages) to HTML. */
export function renderMarkdown(text: string): string {
  return renderer.render(text).trim();
}
