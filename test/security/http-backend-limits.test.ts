// Attack: an HTTP backend that answers with more than switchboard agreed to read
// (limits.maxMessageBytes), to exhaust its memory or to wedge its other calls. A body over the
// limit is refused before it is read, whether or not it says its length, and only the call it
// answers fails, naming both sizes; an SSE event over it is dropped as it is read, the calls and
// events after it go on, and a call whose stream had only that fails at once (not by resuming
// into the same event again until its time runs out); an event stream the SDK reads whole (the
// answer to a notification) is cut at the limit; the backend keeps serving.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test, type TestContext } from 'node:test';
import { readMessages, textOf } from '../gateway/harness.js';
import { serveBulky, type BulkyOptions } from '../fixtures/bulky-http-server.js';
import { captureLog } from '../support/log-capture.js';
import { startGateway } from '../support/start-switchboard.js';

const LIMIT = 1024 * 1024;
/** What the backend answers with: far past the limit, and more than a socket's buffers hold. */
const HUGE = 32 * 1024 * 1024;

type Failure = { code: number; message: string; data?: { reason?: string; bytes?: number; limit?: number } };

async function start(t: TestContext, options: BulkyOptions = {}) {
  const bulky = await serveBulky(options);
  t.after(() => bulky.close());
  const log = captureLog('warn');
  const input = new PassThrough();
  const output = new PassThrough();
  await startGateway(
    t,
    { servers: { bulky: { url: bulky.url } }, limits: { maxMessageBytes: LIMIT } },
    { log: log.logger, stdio: { input, output } },
  );
  t.after(() => void input.end());
  const inbox = readMessages(output);
  let id = 0;
  const call = async (name: string, args: object = {}) => {
    const mine = ++id;
    input.write(
      JSON.stringify({ jsonrpc: '2.0', id: mine, method: 'tools/call', params: { name, arguments: args } }) +
        '\n',
    );
    return inbox.next((m) => m.id === mine);
  };
  return { bulky, log, call };
}

function assertRefused(error: Failure | undefined, atLeast: number) {
  assert.ok(error, 'the answer is an error');
  assert.equal(error.code, -32603);
  assert.equal(error.data?.reason, 'backend_message_too_large');
  assert.equal(error.data?.limit, LIMIT);
  assert.ok(error.data!.bytes! > LIMIT && error.data!.bytes! >= atLeast, `sizes named: ${error.message}`);
  assert.match(error.message, new RegExp(`message limit of ${LIMIT} bytes`));
}

for (const framing of ['json', 'chunked'] as const) {
  test(`a ${framing === 'json' ? 'JSON body whose length is' : 'chunked JSON body'} over the limit is refused unread; only its call fails`, async (t) => {
    const { bulky, call } = await start(t);
    const big = await call('big', { bytes: HUGE, framing });
    // A stated length is named as it is; a chunked body is counted until it passes the limit.
    assertRefused(big.error as Failure | undefined, framing === 'json' ? HUGE : LIMIT);
    // Switchboard closed the connection: the backend could not write the rest into it.
    const written = await bulky.lastWritten();
    assert.ok(
      written < HUGE / 2,
      `the backend wrote ${written} of ${HUGE} bytes before the connection closed`,
    );
    assert.equal(textOf((await call('small')).result), 'ok');
  });
}

test('an SSE answer over the limit is dropped as it is read; its call fails naming the limit', async (t) => {
  const { call, log } = await start(t);
  const big = await call('big', { bytes: HUGE, framing: 'sse' });
  assertRefused(big.error as Failure | undefined, LIMIT);
  assert.equal(textOf((await call('small')).result), 'ok');
  const dropped = log.lines().filter((l) => String(l.msg).includes('SSE event over limits.maxMessageBytes'));
  assert.equal(dropped.length, 1);
  assert.equal(dropped[0]!.backend, 'bulky');
  assert.ok((dropped[0]!.bytes as number) > HUGE, 'the whole event was read past, and counted');
});

test('a resumable SSE answer over the limit fails its call at once, without resuming into it again', async (t) => {
  const { bulky, call } = await start(t);
  const big = await call('big', { bytes: 2 * LIMIT, framing: 'sse-resumable' });
  assertRefused(big.error as Failure | undefined, 2 * LIMIT);
  assert.equal(bulky.resumed(), 0, 'the stream was not resumed');
  assert.equal(textOf((await call('small')).result), 'ok');
});

test('an event stream answering a notification is read no further than the limit', async (t) => {
  // The handshake's notifications/initialized is answered with 32 MiB of small events.
  const { bulky, call } = await start(t, { streamToNotifications: HUGE });
  const written = await bulky.lastWritten();
  assert.ok(written < HUGE / 2, `the backend wrote ${written} of ${HUGE} bytes before the connection closed`);
  assert.equal(textOf((await call('small')).result), 'ok');
});

test('an SSE event over the limit before the answer is dropped; the answer after it comes', async (t) => {
  const { call, log } = await start(t);
  const answered = await call('noisy', { bytes: 2 * LIMIT });
  assert.equal(textOf(answered.result), 'ok');
  const dropped = log.lines().filter((l) => String(l.msg).includes('SSE event over limits.maxMessageBytes'));
  assert.equal(dropped.length, 1);
  // A notification within the limit still comes through the same stream.
  assert.equal(textOf((await call('noisy', { bytes: 1000 })).result), 'ok');
});

test('a body within the limit crosses whole, however it is framed', async (t) => {
  const { call } = await start(t);
  for (const framing of ['json', 'chunked', 'sse'] as const) {
    const answer = await call('big', { bytes: LIMIT - 1000, framing });
    assert.equal(textOf(answer.result), 'x'.repeat(LIMIT - 1000), framing);
  }
});
