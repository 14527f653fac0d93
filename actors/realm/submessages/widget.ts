import { badRequest } from '../../errors.ts';
import type { SubmessageStore } from './state.ts';

/** The widgets a message makes by starting with `/poll` or `/todo`, as the original's `get_widget_data`. */
const WIDGET_TYPES = new Set(['poll', 'todo']);

/** Python's `str.splitlines` separators, which the original splits a widget's lines on. */
const LINE_BREAK = /\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/;
/** A list item's marker, dropped from an option or a task. */
const LIST_MARKER = /^\s*[-*]?\s*/;

/**
 * The widget submessage's content a new message makes, or undefined: `{widget_type, extra_data}` with a
 * poll's question and options or a todo list's title and tasks, from the lines after the command.
 */
export function widgetContent(content: string): string | undefined {
  // Most content is no widget: the split below would cut all of it into words to learn so.
  if (!content.startsWith('/')) return undefined;
  const first = content.split(/\s+|\n+/)[0]!;
  const widgetType = first.slice(1);
  if (!WIDGET_TYPES.has(widgetType)) return undefined;
  const lines = content.replace(first, '').split(LINE_BREAK);
  const heading = lines[0] ? lines.shift()!.trim() : '';
  const items = lines.map((line) => line.trim().replace(LIST_MARKER, '')).filter((line) => line.length > 0);
  const extraData = widgetType === 'poll'
    ? { question: heading, options: items }
    : {
        task_list_title: heading,
        // A task and its description are separated by the first colon.
        tasks: items.map((item) => {
          const colon = item.indexOf(':');
          return colon < 0 ? { task: item.trim(), desc: '' } : { task: item.slice(0, colon).trim(), desc: item.slice(colon + 1).trim() };
        }),
      };
  return JSON.stringify({ widget_type: widgetType, extra_data: extraData });
}

/** The widget a message holds: the `widget_type` of its first "widget" submessage. */
export function widgetType(store: SubmessageStore, messageId: number): string | undefined {
  const widget = store.byMessage.get(messageId)?.find((submessage) => submessage.msgType === 'widget');
  if (!widget) return undefined;
  try {
    const data: unknown = JSON.parse(widget.content);
    const type = (data as { widget_type?: unknown } | null)?.widget_type;
    return typeof type === 'string' ? type : undefined;
  } catch {
    return undefined;
  }
}

type Check = 'string' | 'integer' | 'boolean';
const CHECKS: Record<Check, (value: unknown) => boolean> = {
  string: (value) => typeof value === 'string',
  integer: (value) => Number.isInteger(value),
  boolean: (value) => typeof value === 'boolean',
};

/** The original's `check_dict_only`: exactly these keys, each of its type, with its error texts. */
function checkOnly(name: string, data: Record<string, unknown>, keys: Record<string, Check>): void {
  for (const [key, check] of Object.entries(keys)) {
    if (!(key in data)) throw badRequest(`${key} key is missing from ${name}`);
    if (!CHECKS[check](data[key])) throw badRequest(`${name}["${key}"] is not a${check === 'integer' ? 'n' : ''} ${check}`);
  }
  const extra = Object.keys(data).filter((key) => !(key in keys));
  if (extra.length) throw badRequest(`Unexpected arguments: ${extra.join(', ')}`);
}

/** What a poll's or a todo list's submessage may say, as the original's `validate_poll_data` and `validate_todo_data`. */
export function validateWidgetData(widget: string, data: unknown, isAuthor: boolean): void {
  if (widget !== 'poll' && widget !== 'todo') return;
  const name = `${widget} data`;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw badRequest(`${name} is not a dict`);
  const record = data as Record<string, unknown>;
  if (!('type' in record)) throw badRequest(`type key is missing from ${name}`);
  if (typeof record.type !== 'string') throw badRequest(`${name}["type"] is not a string`);
  const authorOnly = (what: string) => {
    if (!isAuthor) throw badRequest(`You can't edit ${what} unless you are the author.`);
  };
  switch (`${widget}:${record.type}`) {
    case 'poll:vote':
      return checkOnly(name, record, { type: 'string', key: 'string', vote: 'integer' });
    case 'poll:question':
      authorOnly('a question');
      return checkOnly(name, record, { type: 'string', question: 'string' });
    case 'poll:new_option':
      return checkOnly(name, record, { type: 'string', option: 'string', idx: 'integer' });
    case 'todo:new_task':
      return checkOnly(name, record, { type: 'string', key: 'integer', task: 'string', desc: 'string', completed: 'boolean' });
    case 'todo:strike':
      return checkOnly(name, record, { type: 'string', key: 'string' });
    case 'todo:new_task_list_title':
      authorOnly('the task list title');
      return checkOnly(name, record, { type: 'string', title: 'string' });
    default:
      throw badRequest(`Unknown type for ${name}: ${record.type}`);
  }
}
