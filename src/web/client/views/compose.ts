import type { Api } from '../api.ts';
import { clock, h } from '../dom.ts';
import { icon } from '../icons.ts';
import type { Model } from '../model.ts';
import { narrowKey, type Conversation } from '../narrow.ts';
import { Autocomplete } from './autocomplete.ts';
import type { EmojiPicker } from './emoji-picker.ts';

/** A pause in typing this long saves the draft to the server. */
const DRAFT_SAVE_MS = 1_000;

/** Where a message goes: a channel topic, or a conversation. */
type Target = { kind: 'channel'; streamId: number; topic: string } | { kind: 'dm'; userIds: number[] };

/**
 * The compose box: sends with Enter or Ctrl+Enter per the user's `enter_sends`, tells the others it is
 * typing (start at most every started-wait period, stop after the stopped-wait pause), and keeps a draft on
 * the server while text is unsent.
 */
export class Compose {
  readonly element: HTMLElement;
  private readonly text = h('textarea', { class: 'compose-text', rows: 1, 'aria-label': 'Message', placeholder: 'Message' });
  private readonly topic = h('input', { type: 'text', class: 'compose-topic', 'aria-label': 'Topic', placeholder: 'Topic', maxlength: 60 });
  private readonly hint = h('span', { class: 'compose-hint' });
  private readonly enterSends = h('input', { type: 'checkbox', 'aria-label': 'Press Enter to send' });
  private readonly error = h('p', { class: 'form-error small', role: 'alert' });
  private readonly notice = h('p', { class: 'compose-notice', role: 'status' });
  private readonly send = h('button', { type: 'submit', class: 'primary send', 'aria-label': 'Send message', title: 'Send' }, 'Send');
  private readonly files = h('input', { type: 'file', multiple: true, hidden: true, 'aria-label': 'Files to upload' });
  private readonly emojiButton = h('button', { type: 'button', class: 'icon', 'aria-label': 'Add emoji', title: 'Add emoji' }, icon('smile'));
  private readonly progress = h('div', { class: 'uploads' });
  private readonly autocomplete: Autocomplete;
  private narrow: Conversation | null = null;
  /** the server's draft for the narrow on screen; a new slot per narrow, as saves finish after a switch */
  private draft: { id: number | null } = { id: null };
  private draftTimer: ReturnType<typeof setTimeout> | null = null;
  /** draft saves run one after another, so two quick saves never create two drafts */
  private saving: Promise<void> = Promise.resolve();
  private typingTarget: Target | null = null;
  private typingSentAt = 0;
  private typingStopTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly api: Api,
    private readonly model: Model,
    private readonly picker: EmojiPicker,
  ) {
    this.autocomplete = new Autocomplete(this.text, model, () => this.onInput());
    const attach = h('button', { type: 'button', class: 'icon', 'aria-label': 'Attach files', title: 'Attach files (or drop or paste them here)', onclick: () => this.files.click() }, icon('paperclip'));
    const snippets = h('button', { type: 'button', class: 'icon', 'aria-label': 'Saved snippets', title: 'Saved snippets: insert or save one', onclick: () => void this.openSnippets() }, icon('edit'));
    const later = h('button', { type: 'button', class: 'icon', 'aria-label': 'Send later', title: 'Send later: schedule this message', onclick: () => void this.sendLater() }, icon('clock'));
    this.element = h('form', { class: 'compose', 'aria-label': 'Compose a message', onsubmit: (event: Event) => { event.preventDefault(); void this.submit(); } },
      this.topic,
      this.autocomplete.element,
      h('div', { class: 'compose-row' }, this.text, this.send),
      this.progress,
      h('div', { class: 'compose-footer' }, h('div', { class: 'compose-tools' }, attach, this.emojiButton, snippets, later, this.files, this.hint), h('label', { class: 'compose-toggle' }, this.enterSends, 'Enter sends')),
      this.error,
      this.notice,
    );
    this.files.addEventListener('change', () => {
      void this.uploadAll([...(this.files.files ?? [])]);
      this.files.value = '';
    });
    this.emojiButton.addEventListener('click', () => this.picker.open(this.emojiButton, (choice) => this.insert(`:${choice.name}:`)));
    this.text.addEventListener('paste', (event) => {
      const pasted = [...(event.clipboardData?.files ?? [])];
      if (!pasted.length) return;
      event.preventDefault();
      void this.uploadAll(pasted);
    });
    this.text.addEventListener('keydown', (event) => this.onKey(event));
    this.text.addEventListener('input', () => this.onInput());
    this.topic.addEventListener('input', () => this.onInput());
    this.enterSends.addEventListener('change', () => {
      void this.api.patch('/settings', { enter_sends: this.enterSends.checked }).catch((error: Error) => (this.error.textContent = error.message));
    });
  }

  /** Switches to another narrow: the old one's draft is saved, the new one's loaded. */
  setNarrow(narrow: Conversation): void {
    if (this.narrow && narrowKey(this.narrow) === narrowKey(narrow)) return;
    this.flushDraft();
    this.stopTyping();
    this.narrow = narrow;
    const draft = this.model.draftFor(narrow);
    this.draft = { id: draft?.id ?? null };
    this.text.value = draft?.content ?? '';
    this.topic.value = narrow.kind === 'channel' ? narrow.topic ?? '' : '';
    this.topic.hidden = !(narrow.kind === 'channel' && narrow.topic === undefined);
    this.error.textContent = '';
    this.text.placeholder = this.placeholder(narrow);
    this.autosize();
    this.updateSettings();
  }

  focus(): void {
    (this.topic.hidden || this.topic.value ? this.text : this.topic).focus();
  }

  updateSettings(): void {
    const enter = this.model.settings.enterSends;
    this.enterSends.checked = enter;
    this.hint.textContent = enter ? 'Enter to send · Shift+Enter for a new line' : 'Ctrl+Enter to send · Enter for a new line';
  }

  private placeholder(narrow: Conversation): string {
    if (narrow.kind === 'dm') return narrow.userIds.length ? `Message ${narrow.userIds.map((id) => this.model.userName(id)).join(', ')}` : 'Write a note to yourself';
    const channel = this.model.subscriptions.get(narrow.streamId)?.name ?? 'channel';
    return narrow.topic === undefined ? `Message #${channel}` : `Message #${channel} › ${narrow.topic || 'general chat'}`;
  }

  private target(): Target | null {
    const narrow = this.narrow;
    if (!narrow) return null;
    if (narrow.kind === 'dm') return narrow;
    return { kind: 'channel', streamId: narrow.streamId, topic: narrow.topic ?? this.topic.value.trim() };
  }

  private onKey(event: KeyboardEvent): void {
    if (this.autocomplete.handleKey(event)) return;
    if (event.key !== 'Enter' || event.isComposing) return;
    const send = event.ctrlKey || event.metaKey || (this.model.settings.enterSends && !event.shiftKey && !event.altKey);
    if (!send) return;
    event.preventDefault();
    void this.submit();
  }

  private onInput(): void {
    this.autosize();
    this.error.textContent = '';
    if (this.draftTimer) clearTimeout(this.draftTimer);
    this.draftTimer = setTimeout(() => this.flushDraft(), DRAFT_SAVE_MS);
    if (this.text.value.trim()) this.startTyping();
    else this.stopTyping();
  }

  private autosize(): void {
    this.text.style.height = 'auto';
    this.text.style.height = `${Math.min(this.text.scrollHeight, 240)}px`;
  }

  /** Asks when, then schedules the message instead of sending it (the dialogs are a chunk of their own). */
  private async sendLater(): Promise<void> {
    if (!this.text.value.trim()) {
      this.error.textContent = 'Write the message first.';
      this.text.focus();
      return;
    }
    const { askSendTime } = await import('./compose-extras.ts');
    const at = await askSendTime();
    if (at !== null) await this.submit(at);
  }

  private async openSnippets(): Promise<void> {
    const { showSnippets } = await import('./compose-extras.ts');
    const chosen = await showSnippets(this.api, this.model, this.text.value);
    if (chosen !== null) this.insert(chosen);
    else this.text.focus();
  }

  /** Sends the message, or schedules it for `at` (Unix seconds). */
  private async submit(at?: number): Promise<void> {
    const target = this.target();
    const content = this.text.value;
    if (!target || !content.trim()) return;
    if (target.kind === 'channel' && !target.topic && !this.topic.hidden) {
      this.error.textContent = 'Enter a topic first.';
      this.topic.focus();
      return;
    }
    this.send.disabled = true;
    this.notice.textContent = '';
    try {
      const message = target.kind === 'channel'
        ? { type: 'stream', to: target.streamId, topic: target.topic, content }
        : { type: 'direct', to: target.userIds.length ? target.userIds : [this.model.me.userId], content };
      // As the original's web app is recorded, rather than by the browser's User-Agent.
      if (at === undefined) await this.api.post('/messages', { ...message, client: 'website' });
      else {
        await this.api.post('/scheduled_messages', { ...message, scheduled_delivery_timestamp: at });
        this.notice.textContent = `Scheduled for ${new Date(at * 1000).toLocaleString([], { dateStyle: 'medium', timeStyle: 'short', hour12: clock.hour12 })}.`;
      }
      this.text.value = '';
      this.autosize();
      this.stopTyping(false);
      this.discardDraft();
    } catch (error) {
      this.error.textContent = (error as Error).message;
    } finally {
      this.send.disabled = false;
      this.text.focus();
    }
  }

  /** Files dropped anywhere on `area` (the conversation pane) are uploaded into this box. */
  acceptDrops(area: HTMLElement): void {
    const hasFiles = (event: DragEvent) => event.dataTransfer?.types.includes('Files') ?? false;
    area.addEventListener('dragover', (event) => {
      if (!hasFiles(event) || this.element.hidden) return;
      event.preventDefault();
      area.classList.add('dropping');
    });
    area.addEventListener('dragleave', (event) => {
      if (!area.contains(event.relatedTarget as Node | null)) area.classList.remove('dropping');
    });
    area.addEventListener('drop', (event) => {
      area.classList.remove('dropping');
      if (!hasFiles(event) || this.element.hidden) return;
      event.preventDefault();
      void this.uploadAll([...(event.dataTransfer?.files ?? [])]);
    });
  }

  /** Text typed at the caret, with a space either side where a word would otherwise run into it. */
  private insert(text: string): void {
    const { selectionStart: start, selectionEnd: end, value } = this.text;
    const before = value.slice(0, start);
    const after = value.slice(end);
    const padded = `${before && !/\s$/.test(before) ? ' ' : ''}${text}${/^\s/.test(after) ? '' : ' '}`;
    this.text.value = before + padded + after;
    const caret = before.length + padded.length;
    this.text.focus();
    this.text.setSelectionRange(caret, caret);
    this.onInput();
  }

  // Uploads: a placeholder in the text while the file goes up, then its link, as the original does.

  private async uploadAll(files: File[]): Promise<void> {
    await Promise.all(files.map((file) => this.uploadOne(file)));
  }

  private async uploadOne(file: File): Promise<void> {
    const name = file.name || 'pasted-file';
    const placeholder = `[Uploading ${name}…]()`;
    this.insert(placeholder);
    const bar = h('progress', { max: 1, value: 0, 'aria-label': `Uploading ${name}` });
    const row = h('div', { class: 'upload', role: 'status' }, h('span', { class: 'upload-name' }, name), bar);
    this.progress.append(row);
    try {
      const { url } = await this.api.upload(file, (fraction) => (bar.value = fraction));
      this.replacePlaceholder(placeholder, `[${name.replace(/[[\]]/g, '')}](${url})`);
    } catch (error) {
      this.replacePlaceholder(placeholder, '');
      this.error.textContent = `${name}: ${(error as Error).message}`;
    } finally {
      row.remove();
    }
  }

  private replacePlaceholder(placeholder: string, text: string): void {
    const at = this.text.value.indexOf(placeholder);
    if (at < 0) {
      if (text) this.insert(text);
      return;
    }
    const caret = this.text.selectionStart;
    this.text.value = this.text.value.slice(0, at) + text + this.text.value.slice(at + placeholder.length);
    const moved = caret > at ? caret + text.length - placeholder.length : caret;
    this.text.setSelectionRange(moved, moved);
    this.onInput();
  }

  // Typing notifications.

  private startTyping(): void {
    const target = this.target();
    if (!target || (target.kind === 'channel' && !target.topic)) return;
    const now = Date.now();
    if (this.typingTarget === null || now - this.typingSentAt >= this.model.typingTimes.startedWaitMs) {
      this.typingTarget = target;
      this.typingSentAt = now;
      this.sendTyping('start', target);
    }
    if (this.typingStopTimer) clearTimeout(this.typingStopTimer);
    this.typingStopTimer = setTimeout(() => this.stopTyping(), this.model.typingTimes.stoppedWaitMs);
  }

  /** `notify` false: a sent message ends the notice on the other side by itself. */
  private stopTyping(notify = true): void {
    if (this.typingStopTimer) clearTimeout(this.typingStopTimer);
    this.typingStopTimer = null;
    if (this.typingTarget && notify) this.sendTyping('stop', this.typingTarget);
    this.typingTarget = null;
  }

  private sendTyping(op: 'start' | 'stop', target: Target): void {
    const params = target.kind === 'channel'
      ? { op, type: 'stream', stream_id: target.streamId, topic: target.topic }
      : { op, type: 'direct', to: target.userIds.length ? target.userIds : [this.model.me.userId] };
    void this.api.post('/typing', params).catch(() => {});
  }

  // Drafts, kept on the server while text is unsent.

  private flushDraft(): void {
    if (this.draftTimer) clearTimeout(this.draftTimer);
    if (!this.draftTimer) return;
    this.draftTimer = null;
    const target = this.target();
    const content = this.text.value;
    const slot = this.draft;
    if (target) this.saving = this.saving.then(() => this.saveDraft(slot, target, content));
  }

  private async saveDraft(slot: { id: number | null }, target: Target, content: string): Promise<void> {
    try {
      if (!content.trim()) {
        if (slot.id !== null) await this.api.delete(`/drafts/${slot.id}`);
        slot.id = null;
        return;
      }
      const draft = target.kind === 'channel'
        ? { type: 'stream', to: [target.streamId], topic: target.topic, content, timestamp: Math.floor(Date.now() / 1000) }
        : { type: 'private', to: target.userIds.length ? target.userIds : [this.model.me.userId], topic: '', content, timestamp: Math.floor(Date.now() / 1000) };
      if (slot.id !== null) await this.api.patch(`/drafts/${slot.id}`, { draft });
      else slot.id = (await this.api.post('/drafts', { drafts: [draft] })).ids[0] ?? null;
    } catch {
      // Drafts are a convenience: one that cannot be saved (synchronization turned off) is no error to show.
      slot.id = null;
    }
  }

  private discardDraft(): void {
    if (this.draftTimer) clearTimeout(this.draftTimer);
    this.draftTimer = null;
    const slot = this.draft;
    this.saving = this.saving.then(async () => {
      if (slot.id !== null) await this.api.delete(`/drafts/${slot.id}`).catch(() => {});
      slot.id = null;
    });
  }
}
