// An observer of the pipeline's channels that throws must not end the process: Node rethrows a
// subscriber's exception as an uncaught one after the publish, so the watcher catches it, logs it
// once, and keeps the subscription.
import assert from 'node:assert/strict';
import { channel } from 'node:diagnostics_channel';
import { test } from 'node:test';
import { setImmediate as turn } from 'node:timers/promises';
import { watchChannel } from '../../src/observe/watch-channel.js';
import { captureLog } from '../support/log-capture.js';

test('what a watcher throws is logged once and reaches no uncaught-exception handler', async (t) => {
  const log = captureLog('warn');
  const name = 'switchboard:test:watch-channel';
  const seen: unknown[] = [];
  const stop = watchChannel(
    name,
    (message) => {
      seen.push(message);
      throw new Error(`cannot read ${seen.length}`);
    },
    log.logger,
  );
  t.after(stop);
  const uncaught: unknown[] = [];
  const onUncaught = (err: unknown) => uncaught.push(err);
  process.on('uncaughtException', onUncaught);
  t.after(() => process.off('uncaughtException', onUncaught));
  channel(name).publish(1);
  channel(name).publish(2);
  await turn();
  assert.deepEqual(seen, [1, 2], 'still subscribed after a throw');
  assert.deepEqual(uncaught, []);
  const warnings = log.lines().filter((l) => l.channel === name);
  assert.equal(warnings.length, 1);
  assert.equal(warnings[0]!.err, 'cannot read 1');
  stop();
  channel(name).publish(3);
  assert.deepEqual(seen, [1, 2], 'nothing after the unsubscribe');
});
