// Attack: an answer larger than the message limit its reader was promised. A bridge connection
// announces limits.maxMessageBytes and a reader keeps to it: an answer over it is not sent, the
// caller gets an error naming the limit and the size, the event is logged, and the connection
// (or the stdio host's session) goes on serving. Every backend message is within the limit (a
// backend's own are refused past it: http-backend-limits.test.ts); the answer over it is one
// switchboard builds, a catalog merged from two backends.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { rawStdio, textOf } from '../gateway/harness.js';
import { serveBulky } from '../fixtures/bulky-http-server.js';
import { captureLog } from '../support/log-capture.js';
import { startGateway } from '../support/start-switchboard.js';
import { RawBridge, newToken, remoteCaller } from './helpers.js';

const LIMIT = 4 * 1024 * 1024;
const BIG = 4_500_000;
/** Each backend's catalog: about 2.7 MB, within the limit; the two merged are over it. */
const PADDED = { padTools: { count: 1300, descriptionChars: 2000 } };

/** Two backends whose catalogs are each within the limit. */
async function twoBulky(t: TestContext) {
  const [a, b] = await Promise.all([serveBulky(PADDED), serveBulky(PADDED)]);
  t.after(() => Promise.all([a.close(), b.close()]));
  return { bulky: { url: a.url }, bulky2: { url: b.url } };
}

type Failure = { code: number; message: string; data?: { reason?: string; bytes?: number; limit?: number } };

function assertTooLarge(error: Failure | undefined) {
  assert.ok(error, 'the answer was an error');
  assert.equal(error.code, -32603);
  assert.equal(error.data?.reason, 'answer_too_large');
  assert.equal(error.data?.limit, LIMIT);
  assert.ok(error.data!.bytes! > BIG, `the size is named: ${error.message}`);
  assert.match(error.message, new RegExp(`limit of ${LIMIT} bytes`));
}

test('a bridge answer over the announced limit becomes an error naming it; the connection goes on', async (t) => {
  const token = newToken();
  const log = captureLog('warn');
  const sb = await startGateway(
    t,
    { servers: { ...(await twoBulky(t)), r: remoteCaller(token, ['bulky_*', 'bulky2_*']) } },
    { log: log.logger },
  );
  const raw = await RawBridge.as(sb.bridgePath!, token);
  t.after(() => raw.close());

  const big = await raw.request('tools/list', {});
  assertTooLarge(big.error as Failure | undefined);
  // Nothing over the limit reached the socket.
  assert.ok(raw.received.every((m) => JSON.stringify(m).length <= LIMIT));
  const small = await raw.request('tools/call', { name: 'bulky_small', arguments: {} });
  assert.equal(textOf(small.result), 'ok');
  const logged = log.lines().filter((l) => String(l.msg).includes('over the message limit'));
  assert.equal(logged.length, 1);
  assert.equal(logged[0]!.identity, 'r');
});

test('a stdio answer over the limit becomes an error naming it; the session goes on', async (t) => {
  const { write, inbox } = await rawStdio(t, { servers: await twoBulky(t) });
  write(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
  const big = await inbox.next((m) => m.id === 1);
  assertTooLarge(big.error as Failure | undefined);
  const call = (id: number, name: string, args: object) =>
    JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
  write(call(2, 'bulky_small', {}));
  assert.equal(textOf((await inbox.next((m) => m.id === 2)).result), 'ok');
});
