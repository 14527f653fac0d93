import type { RealmChange } from '../changes.ts';
import type { RealmState } from '../state.ts';
import type { Channel } from './state.ts';
import { channelsTouched } from './touched.ts';
import { channelTraffic, ownFields, settledChannelFields, subscriberIds } from './views.ts';

/** The text of each channel's settled fields and of its subscriber list, kept until a change touches the channel (touched.ts). */
interface KeptTexts {
  settled: Map<number, string>;
  subscribers: Map<number, string>;
}

/** Kept beside the state rather than in it, so snapshots do not store it (as realm/version.ts). */
const kept = new WeakMap<RealmState, KeptTexts>();

function keptTexts(state: RealmState): KeptTexts {
  let texts = kept.get(state);
  if (texts === undefined) kept.set(state, (texts = { settled: new Map(), subscribers: new Map() }));
  return texts;
}

/** Drops the kept texts of the channels the change may alter (channelsTouched), before it applies. */
export function forgetChangedChannelTexts(state: RealmState, change: RealmChange): void {
  const texts = kept.get(state);
  if (!texts) return;
  const touched = channelsTouched(change);
  if (touched === 'all') {
    kept.delete(state);
    return;
  }
  for (const id of touched) {
    texts.settled.delete(id);
    texts.subscribers.delete(id);
  }
}

/**
 * A JSON list of channel views or subscriptions in parts, to be written one after another and never joined:
 * a member subscribed to 5,000 channels reads 5.6 MB. Built as objects, those held the event loop 180-360 ms
 * per GET /users/me/subscriptions, most of it collecting the garbage; joined as text, flattening it took
 * another 50 ms (2026-11-29). A channel's settled fields (settledChannelFields) are serialized once until a
 * change touches the channel (touched.ts), with the opening brace, and its subscriber list likewise; its
 * traffic follows the messages and the clock, so it is made each time, with the user's own fields after it.
 */
export class ChannelViewList {
  private readonly parts: string[] = ['['];
  private readonly texts: KeptTexts;

  constructor(
    private readonly state: RealmState,
    private readonly now: number,
    private readonly withSubscribers: boolean,
  ) {
    this.texts = keptTexts(state);
  }

  /** The channel's view (channelView), then `more` fields if given, then `subscribers` if the list has them. */
  channel(channel: Channel, more?: Record<string, unknown>): void {
    this.add(channel, more ? `,${JSON.stringify(more).slice(1, -1)}` : '');
  }

  /** A subscription (subscriptionOf): the channel's view, the user's own fields as the caller shaped them, `subscribers` if the list has them. */
  subscription(channel: Channel, own: ReturnType<typeof ownFields>): void {
    this.channel(channel, own);
  }

  /** The parts, the list closed: add nothing after. */
  close(): string[] {
    this.parts.push(']');
    return this.parts;
  }

  private add(channel: Channel, more: string): void {
    const { state, texts } = this;
    let settled = texts.settled.get(channel.id);
    if (settled === undefined) texts.settled.set(channel.id, (settled = JSON.stringify(settledChannelFields(state, channel)).slice(0, -1)));
    let subscribers = '';
    if (this.withSubscribers) {
      subscribers = texts.subscribers.get(channel.id) ?? '';
      if (!subscribers) texts.subscribers.set(channel.id, (subscribers = `,"subscribers":${JSON.stringify(subscriberIds(state, channel.id))}`));
    }
    if (this.parts.length > 1) this.parts.push(',');
    this.parts.push(settled, `,${JSON.stringify(channelTraffic(state, channel, this.now)).slice(1, -1)}${more}${subscribers}}`);
  }
}
