// Threat: one host's answers read by another through the buffer all ended SSE streams of the HTTP
// front share for resumption (http.streams.maxEndedBytes). Mallory keeps resuming an answer of
// her own while Alice's answers, carrying a canary, end one after another and take its place in
// that buffer: each resume must give Mallory her own answer whole or refuse it, never Alice's bytes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JSON_ANSWER_MAX_BYTES } from '../../src/front/resumable-stream.js';
import { newApiKey, sha256Hex } from '../../src/front/http-auth.js';
import { initialize, probe, rawPost } from '../gateway/harness.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';

const CANARY = 'canary-3f9a-alice-only';
/**
 * Laid into every answer: one over JSON_ANSWER_MAX_BYTES goes as an SSE stream kept for a resume,
 * whatever the timing (a small one that comes within the hold would be plain JSON, kept nowhere).
 */
const SSE_PAD = 'p'.repeat(JSON_ANSWER_MAX_BYTES);
/** About eight answers: each round's end some at once, so the buffer is left in pieces. */
const MAX_ENDED_BYTES = 12_288 + 8 * (JSON_ANSWER_MAX_BYTES + 512);

test("a resumed answer is its own or refused, never bytes of another host's answer", async (t) => {
  const alice = newApiKey();
  const mallory = newApiKey();
  const sb = await startGateway(t, {
    servers: { p: probe('p') },
    audit: { enabled: false },
    http: {
      auth: {
        keys: [
          { name: 'alice', sha256: sha256Hex(alice) },
          { name: 'mallory', sha256: sha256Hex(mallory) },
        ],
      },
      streams: { maxEndedBytes: MAX_ENDED_BYTES, keepMs: 60_000 },
    },
  });
  const url = httpUrl(sb);
  const open = async (key: string) => {
    const init = await rawPost(url, initialize(), { authorization: `Bearer ${key}` });
    const headers = { authorization: `Bearer ${key}`, 'mcp-session-id': init.headers.get('mcp-session-id')! };
    await rawPost(url, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), headers);
    return headers;
  };
  const [asAlice, asMallory] = [await open(alice), await open(mallory)];
  const sse = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
  /** POSTs an echo of `text` and reads its SSE stream to the end: the body and its first event id. */
  const echo = async (headers: Record<string, string>, id: number, text: string) => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { ...sse, ...headers },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'echo', arguments: { text } },
      }),
    });
    const body = await res.text();
    return { body, priming: /^id: (\S+)/.exec(body)![1]! };
  };
  const resume = async (lastEventId: string) => {
    const res = await fetch(url, { headers: { ...sse, ...asMallory, 'last-event-id': lastEventId } });
    return { status: res.status, body: await res.text() };
  };

  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  let refused = 0;
  const earlier: { body: string; priming: string }[] = [];
  for (let round = 0; round < 60; round++) {
    const text = `${SSE_PAD}${'m'.repeat(50 + Math.floor(next() * 1200))}${round}`;
    const own = await echo(asMallory, 1000 + round, text);
    assert.ok(own.body.includes(text));
    // Alice's answers end while Mallory resumes hers, one after another and at the same time.
    // Sizes that leave the buffer in pieces: some answers then fit within the bound but not after
    // the newest, and what they may take must never be a kept answer's bytes.
    const alices = Array.from({ length: 1 + Math.floor(next() * 4) }, (_, i) =>
      echo(asAlice, round * 10 + i, `${CANARY} ${SSE_PAD}${'a'.repeat(Math.floor(next() * 3000))}`),
    );
    const resumes = Array.from({ length: 3 }, () => resume(own.priming));
    for (const { status, body } of await Promise.all(resumes)) {
      assert.ok(!body.includes(CANARY), "Mallory's resume carries Alice's canary");
      if (status === 400) continue;
      assert.equal(status, 200);
      assert.equal(body, own.body, 'a resume that succeeds is her own answer, byte for byte');
    }
    for (const a of await Promise.all(alices)) assert.ok(a.body.includes(CANARY));
    // Once Alice's answers have ended, any of Mallory's may be gone, but none turned into hers.
    earlier.push(own);
    for (const answer of earlier) {
      const after = await resume(answer.priming);
      assert.ok(!after.body.includes(CANARY));
      if (after.status === 400) refused++;
      else assert.equal(after.body, answer.body, `round ${round}: an earlier answer of hers changed`);
    }
  }
  assert.ok(refused > 0, 'the bound made some of her answers go');
});
