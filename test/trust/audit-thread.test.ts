// The audit writer's thread: a thread that dies costs only the batches it held (counted, logged),
// and the next batch starts another; a writer far behind waits rather than queueing without bound.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { Worker } from 'node:worker_threads';
import { AuditWriter } from '../../src/trust/audit-writer.js';
import { openTrustDb } from '../../src/trust/trust-db.js';
import { captureLog } from '../support/log-capture.js';
import { tempDbPath, toolCall } from './helpers.js';

/** The writer's current thread (a private field: the test plays the thread's sudden death). */
const threadOf = (writer: AuditWriter) =>
  (writer as unknown as { thread: { running?: { worker: Worker } } }).thread.running?.worker;

test('a writer thread that dies loses only what it held; the next batch starts another', async (t) => {
  const path = await tempDbPath(t);
  openTrustDb(path).close();
  const log = captureLog('warn');
  const writer = new AuditWriter(path, { values: false, log: log.logger });
  t.after(() => writer.close());
  for (let i = 0; i < 3; i++) writer.ended(toolCall(i), 1, undefined);
  writer.flush();

  const first = threadOf(writer)!;
  const exited = once(first, 'exit');
  await first.terminate();
  await exited;
  for (let i = 3; i < 6; i++) writer.ended(toolCall(i), 1, undefined);
  writer.flush();
  assert.notEqual(threadOf(writer), first, 'a new thread took over');
  assert.equal(writer.lost, 0, 'nothing was in flight when the thread died');

  const db = openTrustDb(path, { readonly: true });
  t.after(() => db.close());
  const { n } = db.prepare('SELECT count(*) AS n FROM audit').get() as { n: number };
  assert.equal(n, 6);
});

test('a writer whose thread is gone reports the batch it was given as lost, naming the calls', async (t) => {
  const path = await tempDbPath(t);
  openTrustDb(path).close();
  const log = captureLog('warn');
  const writer = new AuditWriter(path, { values: false, log: log.logger });
  t.after(() => writer.close());
  const thread = threadOf(writer)!;
  // The thread is told to stop, and the batch posted before its end is known: it is never written.
  const exited = once(thread, 'exit');
  void thread.terminate();
  const c = toolCall(1);
  writer.ended(c, 1, undefined);
  // Its record made now (not once the turn is over) and posted to the thread before its end is known.
  const internals = writer as unknown as { ends: { flush(): void }; send(): void };
  internals.ends.flush();
  internals.send();
  await exited;
  assert.equal(writer.lost, 1);
  const line = log.lines().find((l) => l.msg === 'audit write failed; these calls have no audit record');
  assert.ok(line, log.text());
  assert.deepEqual(line.callIds, [c.callId]);
});
