import type { Api } from '../api.ts';
import { h } from '../dom.ts';
import type { Model, ScheduledMessage } from '../model.ts';
import { showDialog } from './dialog.ts';

// Scheduled send and saved snippets: loaded on demand (compose.ts and app.ts import this dynamically).

/** A Date as a datetime-local field's value, in the browser's time zone. */
const localValue = (time: Date) => {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${time.getFullYear()}-${pad(time.getMonth() + 1)}-${pad(time.getDate())}T${pad(time.getHours())}:${pad(time.getMinutes())}`;
};

/** Tomorrow at nine, Zulip's first suggestion. */
function tomorrowMorning(): Date {
  const time = new Date();
  time.setDate(time.getDate() + 1);
  time.setHours(9, 0, 0, 0);
  return time;
}

const seconds = (value: string) => {
  const time = new Date(value).getTime();
  return Number.isFinite(time) ? Math.round(time / 1000) : null;
};

/** Asks when to send: answers the Unix time in seconds, or null if the person cancels. */
export async function askSendTime(): Promise<number | null> {
  const when = h('input', { type: 'datetime-local', required: true, value: localValue(tomorrowMorning()), min: localValue(new Date()) });
  const answer = await showDialog('Schedule message', [
    h('label', { class: 'dialog-field' }, 'Send at', when),
  ], [{ label: 'Schedule', value: 'schedule', primary: true }]);
  return answer === 'schedule' ? seconds(when.value) : null;
}

/** Where a scheduled message goes, in words. */
function destination(model: Model, message: ScheduledMessage): string {
  if (message.type === 'stream') return `#${model.subscriptions.get(message.to as number)?.name ?? 'unknown'} › ${message.topic || 'general chat'}`;
  const others = (message.to as number[]).filter((id) => id !== model.me.userId);
  return others.length ? `To ${others.map((id) => model.userName(id)).join(', ')}` : 'To yourself';
}

/** The messages waiting to be sent: each one's text and time can be changed, or the message cancelled. */
export async function showScheduled(api: Api, model: Model): Promise<void> {
  const status = h('p', { class: 'settings-status', role: 'status' });
  const rows = model.scheduledByTime().map((message) => {
    const text = h('textarea', { rows: 3, 'aria-label': 'Message text' });
    text.value = message.content;
    const when = h('input', { type: 'datetime-local', 'aria-label': 'Send at', value: localValue(new Date(message.scheduled_delivery_timestamp * 1000)) });
    const row: HTMLElement = h('li', { class: 'scheduled-item', 'aria-label': `${destination(model, message)}: ${message.content.slice(0, 40)}` },
      h('div', { class: 'scheduled-place' }, destination(model, message)),
      text, when,
      h('div', { class: 'scheduled-actions' },
        h('button', { type: 'button', class: 'primary small', onclick: () => void save() }, 'Save changes'),
        h('button', { type: 'button', class: 'ghost small', onclick: () => void cancel() }, 'Cancel message')));
    const save = async () => {
      const at = seconds(when.value);
      try {
        await api.patch(`/scheduled_messages/${message.scheduled_message_id}`, { content: text.value, ...(at !== null ? { scheduled_delivery_timestamp: at } : {}) });
        status.textContent = 'Saved.';
      } catch (error) {
        status.textContent = `Not saved: ${(error as Error).message}`;
      }
    };
    const cancel = async () => {
      try {
        await api.delete(`/scheduled_messages/${message.scheduled_message_id}`);
        row.remove();
        status.textContent = 'The message will not be sent.';
      } catch (error) {
        status.textContent = `Not cancelled: ${(error as Error).message}`;
      }
    };
    return row;
  });
  await showDialog('Scheduled messages', [
    rows.length ? h('ul', { class: 'scheduled-list' }, rows) : h('p', {}, 'No messages are waiting to be sent.'),
    status,
  ]);
}

/**
 * Saved snippets: one is inserted with its button (answered, for the compose box), a new one saved from a
 * title and text (the compose box's text to begin with), an old one deleted.
 */
export async function showSnippets(api: Api, model: Model, draft: string): Promise<string | null> {
  let chosen: string | null = null;
  const status = h('p', { class: 'settings-status', role: 'status' });
  const list = h('ul', { class: 'snippet-list' });
  const draw = () => {
    const snippets = [...model.snippets.values()].sort((a, b) => a.title.localeCompare(b.title));
    // The button names what it does; the preview beside it stays out of its name.
    list.replaceChildren(...snippets.map((snippet) => h('li', { class: 'snippet-item' },
      h('div', { class: 'snippet-insert' },
        h('button', { type: 'button', class: 'snippet-title', 'aria-label': `Insert ${snippet.title}`, title: snippet.content, onclick: (event: Event) => {
          chosen = snippet.content;
          (event.target as HTMLElement).closest('dialog')?.close();
        } }, h('strong', {}, snippet.title)),
        h('span', { class: 'snippet-text' }, snippet.content)),
      h('button', { type: 'button', class: 'ghost small', 'aria-label': `Delete ${snippet.title}`, onclick: () => void remove(snippet.id) }, 'Delete'))));
    if (!snippets.length) list.append(h('li', {}, 'No saved snippets yet.'));
  };
  const remove = async (id: number) => {
    try {
      await api.delete(`/saved_snippets/${id}`);
      model.snippets.delete(id);
      draw();
      status.textContent = 'Deleted.';
    } catch (error) {
      status.textContent = `Not deleted: ${(error as Error).message}`;
    }
  };
  const title = h('input', { type: 'text', maxlength: 200 });
  const content = h('textarea', { rows: 3 });
  content.value = draft;
  const create = async () => {
    if (!title.value.trim() || !content.value.trim()) {
      status.textContent = 'A snippet needs a title and a text.';
      return;
    }
    try {
      const answer = await api.post('/saved_snippets', { title: title.value.trim(), content: content.value });
      model.snippets.set(answer.saved_snippet_id, { id: answer.saved_snippet_id, title: title.value.trim(), content: content.value, date_created: Date.now() / 1000 });
      title.value = '';
      content.value = '';
      draw();
      status.textContent = 'Saved.';
    } catch (error) {
      status.textContent = `Not saved: ${(error as Error).message}`;
    }
  };
  draw();
  await showDialog('Saved snippets', [
    list,
    h('fieldset', { class: 'settings-section' }, h('legend', {}, 'New snippet'),
      h('label', { class: 'dialog-field' }, 'Title', title),
      h('label', { class: 'dialog-field' }, 'Text', content),
      h('div', {}, h('button', { type: 'button', class: 'ghost small', onclick: () => void create() }, 'Save snippet'))),
    status,
  ]);
  return chosen;
}
