import type { Api } from './api.ts';
import type { Uploads } from './views/content.ts';

/** Uploaded files as the page shows them: previews from blobs fetched once each, and links that open in a tab. */
export class UploadFiles implements Uploads {
  private readonly images = new Map<string, Promise<string>>();

  constructor(private readonly api: Api) {}

  image(path: string): Promise<string> {
    let url = this.images.get(path);
    if (!url) {
      url = this.api.file(path).then((blob) => URL.createObjectURL(blob));
      // A failure is not kept: the next rendering tries again.
      url.catch(() => this.images.delete(path));
      this.images.set(path, url);
    }
    return url;
  }

  /**
   * A new tab cannot send the credentials, so it opens the short-lived link the API hands out
   * (GET /api/v1/user_uploads/...). The tab is opened at once, in the click, so no pop-up blocker stops it.
   */
  openFile(path: string): void {
    const tab = open('about:blank', '_blank');
    if (tab) tab.opener = null;
    this.api.get(path).then(
      (answer) => tab && (tab.location.href = answer.url),
      () => tab?.close(),
    );
  }

  /** Frees the previews' blobs (on sign-out). */
  clear(): void {
    for (const url of this.images.values()) void url.then((href) => URL.revokeObjectURL(href), () => {});
    this.images.clear();
  }
}
