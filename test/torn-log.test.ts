import { rmSync } from 'node:fs';
import { open } from 'lmdb';
import t from 'tap';
import { startChild } from './helpers/child.ts';
import { tempDir } from './helpers/server.ts';

const PASSWORD = 'torn-Passw0rd-for-tests';

/** Writes raw bytes into the log of a data directory whose server is stopped. */
async function writeRawLogRecord(dataDir: string, seq: number | 'last', bytes: Buffer): Promise<number> {
  const root = open({ path: dataDir, encoding: 'binary', compression: false });
  const log = root.openDB<Buffer, number>({ name: 'log', encoding: 'binary' });
  let last = 0;
  for (const key of log.getKeys({ reverse: true, limit: 1 })) last = key;
  const key = seq === 'last' ? last + 1 : seq;
  await log.put(key, bytes);
  await root.close();
  return key;
}

t.test('a torn record at the end of the log is reported and dropped; everything before it stays', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await startChild(dataDir);
  for (const name of ['a', 'b', 'c']) {
    t.equal((await first.api.post('/users', { email: `${name}@example.com`, password: PASSWORD, full_name: name })).status, 200);
  }
  first.process.kill('SIGKILL');
  await first.exited;
  const torn = await writeRawLogRecord(dataDir, 'last', Buffer.from([0xc1, 0x00, 0xff]));

  const second = await startChild(dataDir, { CHAT_LOG_LEVEL: 'warn' });
  t.match(second.output(), new RegExp(`discarding a torn record at the end of the log.*|"seq":${torn}`), 'the start reports it');
  const emails = (await second.api.get('/users')).body.members.map((m: { email: string }) => m.email);
  t.same(emails.sort(), ['a@example.com', 'b@example.com', 'c@example.com', 'owner@example.com']);
  t.equal((await second.api.post('/users', { email: 'd@example.com', password: PASSWORD, full_name: 'd' })).status, 200, 'writes go on');
  second.process.kill('SIGKILL');
  await second.exited;

  const third = await startChild(dataDir);
  t.notMatch(third.output(), /torn/, 'the next start finds a clean log');
  t.equal((await third.api.get('/users')).body.members.length, 5, 'the write after the torn record is kept');
  third.process.kill('SIGTERM');
  await third.exited;
});

t.test('a corrupt record in the middle of the log stops the start instead of skipping history', async (t) => {
  const dataDir = tempDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const first = await startChild(dataDir);
  await first.api.post('/users', { email: 'x@example.com', password: PASSWORD, full_name: 'x' });
  await first.api.post('/users', { email: 'y@example.com', password: PASSWORD, full_name: 'y' });
  first.process.kill('SIGKILL');
  await first.exited;
  await writeRawLogRecord(dataDir, 2, Buffer.from([0xc1]));
  await t.rejects(startChild(dataDir), /log record 2 is corrupt/);
});
