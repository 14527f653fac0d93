import type { Json } from './api.ts';
import type { Model } from './model.ts';
import { narrowOf, sameNarrow, type Message, type Narrow } from './narrow.ts';

/**
 * Desktop notifications (the Notification API) for direct messages and mentions, as the user's settings say
 * (`enable_desktop_notifications`; `pm_content_in_desktop_notifications` for a direct message's text). None
 * for one's own messages, nor for a conversation on screen while the page is in view. A click opens the
 * conversation.
 */
export class Notifier {
  constructor(private readonly model: Model, private readonly open: (narrow: Narrow) => void) {}

  /** Whether the browser still needs asking (only a click may ask). */
  get canAsk(): boolean {
    return typeof Notification !== 'undefined' && Notification.permission === 'default' && this.model.settings.desktopNotifications;
  }

  async ask(): Promise<void> {
    if (typeof Notification !== 'undefined') await Notification.requestPermission();
  }

  consider(event: Json, onScreen: Narrow | null): void {
    if (event.type !== 'message' || typeof Notification === 'undefined' || Notification.permission !== 'granted') return;
    const message = event.message as Message;
    const flags: string[] = event.flags ?? [];
    const me = this.model.me.userId;
    if (message.sender_id === me || flags.includes('read') || !this.model.settings.desktopNotifications) return;
    const direct = message.type === 'private';
    if (!direct && !flags.some((flag) => flag === 'mentioned' || flag === 'stream_wildcard_mentioned' || flag === 'topic_wildcard_mentioned')) return;
    const place = narrowOf(message, me);
    if (document.visibilityState === 'visible' && document.hasFocus() && (sameNarrow(place, onScreen) || (onScreen?.kind === 'channel' && onScreen.topic === undefined && place.kind === 'channel' && place.streamId === onScreen.streamId))) return;
    const sender = this.model.userName(message.sender_id);
    const title = direct ? sender : `${sender} mentioned you in #${this.model.subscriptions.get(message.stream_id!)?.name ?? ''} › ${message.subject}`;
    const body = direct && !this.model.settings.directContentInNotifications ? 'New direct message' : textOf(message.content);
    const notification = new Notification(title, { body, tag: `message-${message.id}` });
    notification.addEventListener('click', () => {
      window.focus();
      this.open(place);
      notification.close();
    });
  }
}

/** A message's HTML as plain text, for a notification's body. */
function textOf(html: string): string {
  const holder = document.createElement('template');
  holder.innerHTML = html;
  return (holder.content.textContent ?? '').replace(/\s+/g, ' ').trim().slice(0, 300);
}
