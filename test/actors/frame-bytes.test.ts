import t from 'tap';
import { EPOCH, EventBuffer, eventsJson } from '../../actors/queue/buffer.ts';
import { asciiJson, EventsWriter } from '../../actors/queue/frame-bytes.ts';
import { Payloads } from '../../actors/queue/payloads.ts';

const head = (queueId: string) => `{"result":"success","msg":"","queue_id":${asciiJson(queueId)},"events":`;

/** A buffer holding these events, logged ones (ids n * EPOCH) and ephemeral ones alternating. */
function bufferOf(payloads: Payloads, events: object[]): EventBuffer {
  const buffer = new EventBuffer(payloads);
  events.forEach((event, i) => {
    const payload = payloads.create('x', JSON.stringify(event));
    if (i % 2) buffer.pushEphemeral(payload);
    else buffer.pushLogged({ payload });
  });
  return buffer;
}

t.test('a frame is byte for byte the text of a poll answer: head, the events rendered, tail', async (t) => {
  const payloads = new Payloads();
  const events = [
    { type: 'message', message: { content: 'plain' }, flags: [] },
    { type: 'message', message: { content: 'é, 日本語, 😀 and a lone \ud800 surrogate' }, flags: ['read'] },
    { type: 'typing', op: 'start' },
    { type: 'realm_user', op: 'update', person: { full_name: 'Zoë "quoted" \\ back' } },
  ];
  const buffer = bufferOf(payloads, events);
  t.ok(buffer.events.some((event) => event.id >= EPOCH), 'logged ids of several digits');
  const writer = new EventsWriter();
  for (let from = -1; from < buffer.events.length; from++) {
    const after = from < 0 ? -1 : buffer.events[from]!.id;
    const expected = buffer.events.length - from - 1 === 0 ? null : `${head('q-1')}[${buffer.events.slice(from + 1).map((event) => `{"id":${event.id},${event.payload.body}`).join(',')}]}`;
    const first = buffer.handOutAfter(after);
    if (expected === null) {
      t.equal(first, -1, 'nothing after the newest');
      continue;
    }
    const bytes = writer.write(head('q-1'), buffer.events, first, '}');
    t.equal(Buffer.from(bytes).toString('utf8'), expected, `the events after ${after}`);
    t.same(Buffer.compare(Buffer.from(bytes), Buffer.from(expected, 'utf8')), 0, 'as UTF-8');
  }
  t.same(JSON.parse(Buffer.from(writer.write(head('q-1'), buffer.events, 0, '}')).toString('utf8')).events.map((event: { type: string }) => event.type), ['message', 'message', 'typing', 'realm_user']);
});

t.test('a frame larger than the reused buffer gets one of its own; the next small frame is right again', async (t) => {
  const payloads = new Payloads();
  const big = { type: 'alert_words', alert_words: Array.from({ length: 5000 }, (_, i) => `word ${i} ✓`) };
  const buffer = bufferOf(payloads, [big, big, { type: 'heartbeat' }]);
  const writer = new EventsWriter();
  const large = writer.write(head('q'), buffer.events, 0, '}');
  t.ok(large.length > 64 * 1024, 'larger than the reused 64 KB');
  const text = Buffer.from(large).toString('utf8');
  t.same(JSON.parse(text).events.map((event: { id: number }) => event.id), buffer.events.map((event) => event.id));
  const small = writer.write(head('q'), buffer.events, 2, '}');
  t.equal(Buffer.from(small).toString('utf8'), `${head('q')}[{"id":${buffer.events[2]!.id},"type":"heartbeat"}]}`);
  t.equal(Buffer.from(large).toString('utf8'), text, 'the large frame was not overwritten by the small one');
});

t.test('ids are written in full, up to 2^53', async (t) => {
  const payloads = new Payloads();
  const writer = new EventsWriter();
  for (const id of [0, 7, 10, 99, 100, EPOCH, 123 * EPOCH + 45, Number.MAX_SAFE_INTEGER]) {
    const event = { id, payload: payloads.create('heartbeat', '{"type":"heartbeat"}') };
    t.equal(Buffer.from(writer.write('', [event], 0, '')).toString('utf8'), `[{"id":${id},"type":"heartbeat"}]`);
  }
});

t.test('asciiJson: the JSON of a string with everything past ASCII escaped, the same value to a reader', async (t) => {
  for (const text of ['abc-123', 'node-1:abc', 'é😀', 'a"b\\c\n']) {
    const json = asciiJson(text);
    t.match(json, /^[\x00-\x7f]*$/, `${JSON.stringify(text)} is ASCII`);
    t.equal(JSON.parse(json), text);
  }
  t.equal(asciiJson('abc'), JSON.stringify('abc'), 'ASCII ids are as JSON.stringify writes them');
});

t.test("a poll's events as bytes are the text eventsJson writes, none as []", async (t) => {
  const payloads = new Payloads();
  const buffer = bufferOf(payloads, [{ type: 'message', message: { content: 'é 😀' } }, { type: 'typing', op: 'stop' }]);
  const writer = new EventsWriter();
  const handed = buffer.handOutAll();
  const expected = `{"a":${eventsJson(handed)},"b":1}`;
  t.equal(Buffer.from(writer.write('{"a":', handed, 0, ',"b":1}')).toString('utf8'), expected);
  t.equal(writer.write('{"a":', handed, 0, ',"b":1}').length, Buffer.byteLength(expected), 'sized exactly');
  buffer.acknowledge(handed[1]!.id);
  t.same(handed.map((event) => event.payload.type), ['x', 'x'], 'what was handed out stays after the acknowledgement');
  const none = buffer.handOutAll();
  t.equal(eventsJson(none), '[]');
  t.equal(Buffer.from(writer.write('{"a":', none, 0, '}')).toString('utf8'), '{"a":[]}');
});
