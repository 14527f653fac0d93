import type { Api } from '../api.ts';
import { h } from '../dom.ts';
import type { Model } from '../model.ts';
import type { Narrow } from '../narrow.ts';
import { showDialog } from './dialog.ts';

/** The original's mark of a resolved topic. */
export const RESOLVED_PREFIX = '✔ ';

type TopicNarrow = { kind: 'channel'; streamId: number; topic: string };

/**
 * A topic's header buttons: resolve (or unresolve) it, and rename or move it to another channel. Each moves
 * the whole topic (propagate_mode change_all) through one of its messages; the page then follows it.
 */
export class TopicTools {
  readonly element = h('div', { class: 'topic-tools', role: 'group', 'aria-label': 'Topic actions' });
  private narrow: TopicNarrow | null = null;

  constructor(private readonly api: Api, private readonly model: Model, private readonly moved: (narrow: Narrow) => void) {}

  update(narrow: Narrow | null): void {
    this.narrow = narrow?.kind === 'channel' && narrow.topic !== undefined && narrow.topic !== '' ? { ...narrow, topic: narrow.topic } : null;
    this.element.hidden = this.narrow === null;
    if (!this.narrow) return this.element.replaceChildren();
    const resolved = this.narrow.topic.startsWith(RESOLVED_PREFIX);
    this.element.replaceChildren(
      h('button', { type: 'button', class: 'ghost small', onclick: () => void this.resolve(!resolved) }, resolved ? 'Mark as unresolved' : 'Mark as resolved'),
      h('button', { type: 'button', class: 'ghost small', onclick: () => void this.move() }, 'Move topic'),
    );
  }

  private async resolve(resolve: boolean): Promise<void> {
    const narrow = this.narrow;
    if (!narrow) return;
    const topic = resolve ? RESOLVED_PREFIX + narrow.topic : narrow.topic.slice(RESOLVED_PREFIX.length);
    await this.change(narrow, narrow.streamId, topic);
  }

  private async move(): Promise<void> {
    const narrow = this.narrow;
    if (!narrow) return;
    const name = h('input', { type: 'text', required: true, maxlength: 60, value: narrow.topic, 'aria-label': 'New topic name' });
    const channel = h('select', { 'aria-label': 'Channel' }, this.model.channels().map((sub) => h('option', { value: sub.stream_id, selected: sub.stream_id === narrow.streamId }, `#${sub.name}`)));
    const answer = await showDialog(`Move “${narrow.topic}”`, [
      h('label', { class: 'dialog-field' }, 'Topic', name),
      h('label', { class: 'dialog-field' }, 'Channel', channel),
    ], [{ label: 'Move', value: 'move', primary: true }]);
    if (answer !== 'move') return;
    await this.change(narrow, Number(channel.value), name.value.trim());
  }

  private async change(narrow: TopicNarrow, streamId: number, topic: string): Promise<void> {
    const anyMessage = this.model.feed.find((message) => message.stream_id === narrow.streamId);
    if (!anyMessage || (topic === narrow.topic && streamId === narrow.streamId)) return;
    try {
      await this.api.patch(`/messages/${anyMessage.id}`, { topic, propagate_mode: 'change_all', ...(streamId !== narrow.streamId ? { stream_id: streamId } : {}) });
      this.moved({ kind: 'channel', streamId, topic });
    } catch (error) {
      alert((error as Error).message);
    }
  }
}
