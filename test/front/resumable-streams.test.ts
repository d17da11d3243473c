// A legacy host whose SSE connection drops comes back with GET and Last-Event-ID and gets what
// followed, once and in order; what is kept for that is bounded; only its own session's streams
// can be resumed; and switchboard itself can close a long call's connection for the host to poll.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ConfigInput } from '../../src/config/schema.js';
import { JSON_ANSWER_MAX_BYTES } from '../../src/front/resumable-stream.js';
import { probe, rawSession } from '../gateway/harness.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';
import { until } from '../support/poll.js';
import { nextMessage, openSse, type SseConnection, type SseEvent } from './sse-reader.js';

const call = (id: number, name: string, args: object = {}, meta?: object) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) },
  });

async function gateway(t: import('node:test').TestContext, streams: object = {}) {
  const input: ConfigInput = { servers: { p: probe('p') }, audit: { enabled: false }, http: { streams } };
  const sb = await startGateway(t, input);
  const url = httpUrl(sb);
  const session = await rawSession(url, { elicitation: {} });
  return { url, session };
}

/** The host accepts the question `asked` (an elicitation) with answer "yes". */
const acceptElicitation = (url: string, headers: Record<string, string>, asked: SseEvent) =>
  fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: asked.message!.id,
      result: { action: 'accept', content: { answer: 'yes' } },
    }),
  });

const isAnswer = (id: number) => (m: Record<string, unknown>) => m.id === id && 'result' in m;

test('a host whose stream is cut mid-call resumes with Last-Event-ID and gets what followed, once and in order', async (t) => {
  const { url, session } = await gateway(t);
  const headers = { 'mcp-session-id': session };
  const post = await openSse(url, call(1, 'elicit', { message: 'go on?' }), headers);
  assert.equal(post.status, 200);
  assert.match(post.headers.get('content-type') ?? '', /text\/event-stream/);
  const priming = await post.events.next();
  assert.equal(priming.message, undefined, 'the stream opens with an event without data');
  assert.ok(priming.id, 'the priming event has an id');
  assert.equal(priming.retry, 1000, 'and tells the host when to come back');
  const asked = await nextMessage(post, (m) => m.method === 'elicitation/create');
  post.cut();
  await post.ended;

  // The host answers the question; the call ends while nobody reads its stream.
  const answer = await acceptElicitation(url, headers, asked);
  assert.equal(answer.status, 202);

  const resumed = await openSse(url, undefined, { ...headers, 'last-event-id': asked.id! });
  assert.equal(resumed.status, 200);
  const result = await nextMessage(resumed, isAnswer(1));
  await resumed.ended;
  const after = resumed.events.items.filter((e) => e.message !== undefined);
  assert.deepEqual(after, [result], 'only what followed the last event seen, nothing twice');
  assert.match(JSON.stringify(result.message), /"action\\":\\"accept\\"/);

  // From the priming event: the question again, then the answer, in order, with the same ids.
  const again = await openSse(url, undefined, { ...headers, 'last-event-id': priming.id! });
  await again.ended;
  const replayed = again.events.items.filter((e) => e.message !== undefined);
  assert.deepEqual(
    replayed.map((e) => e.id),
    [asked.id, result.id],
  );
});

test('every progress event of a call cut at any point arrives exactly once across the resume', async (t) => {
  const { url, session } = await gateway(t);
  const headers = { 'mcp-session-id': session };
  const steps = 40;
  const post = await openSse(url, call(2, 'progress', { steps }, { progressToken: 'tok' }), headers);
  await nextMessage(post, (m) => m.method === 'notifications/progress');
  post.cut();
  await post.ended;
  const seen = post.events.items.filter((e) => e.message !== undefined);
  const last = seen.at(-1)!;
  // The cut may come after the answer already arrived: the resumed stream then replays nothing.
  const resumed = await openSse(url, undefined, { ...headers, 'last-event-id': last.id! });
  await resumed.ended;
  const all = [...seen, ...resumed.events.items.filter((e) => e.message !== undefined)];
  const progress = all.filter((e) => e.message!.method === 'notifications/progress');
  assert.deepEqual(
    progress.map((e) => (e.message!.params as { progress: number }).progress),
    Array.from({ length: steps }, (_, i) => i + 1),
  );
  assert.equal(all.at(-1)!.message!.id, 2, 'the answer comes last');
  assert.equal(new Set(all.map((e) => e.id)).size, all.length, 'every event id is distinct');
});

test('replay keeps at most maxEvents per stream, and an ended stream only for keepMs', async (t) => {
  // keepMs long enough that a resume right after the end is surely in time on a busy machine.
  const { url, session } = await gateway(t, { maxEvents: 2, keepMs: 3000 });
  const headers = { 'mcp-session-id': session };
  const post = await openSse(url, call(3, 'progress', { steps: 5 }, { progressToken: 'tok' }), headers);
  await post.ended;
  const events = post.events.items;
  const messages = events.filter((e) => e.message !== undefined);
  assert.equal(messages.length, 6, 'five progress events and the answer went out live');

  const early = await openSse(url, undefined, { ...headers, 'last-event-id': events[0]!.id! });
  assert.equal(early.status, 400, 'the events after the priming one are no longer all kept');
  const late = await openSse(url, undefined, { ...headers, 'last-event-id': messages.at(-2)!.id! });
  assert.equal(late.status, 200);
  await late.ended;
  assert.deepEqual(
    late.events.items.filter((e) => e.message !== undefined).map((e) => e.id),
    [messages.at(-1)!.id],
  );
  // keepMs after the stream ended, it is gone.
  await until(async () => {
    const res = await openSse(url, undefined, { ...headers, 'last-event-id': messages.at(-2)!.id! });
    res.cut();
    return res.status === 400 ? true : undefined;
  }, 'the ended stream to be forgotten');
});

test('ended streams together keep at most maxEndedBytes: the first ended are forgotten early, the newest stays', async (t) => {
  // Each answer echoes JSON_ANSWER_MAX_BYTES characters back: one ended stream fits, two do not.
  // Over that size, an answer goes as an SSE stream kept for a resume, however soon it comes.
  const { url, session } = await gateway(t, { maxEndedBytes: JSON_ANSWER_MAX_BYTES * 1.5, keepMs: 60_000 });
  const other = await rawSession(url);
  const answered = async (id: number, sessionId: string) => {
    const post = await openSse(url, call(id, 'echo', { text: 'x'.repeat(JSON_ANSWER_MAX_BYTES) }), {
      'mcp-session-id': sessionId,
    });
    await post.ended;
    return post.events.items[0]!.id!;
  };
  const resumes = async (primingId: string, sessionId: string) => {
    const res = await openSse(url, undefined, { 'mcp-session-id': sessionId, 'last-event-id': primingId });
    await res.ended;
    return res.status;
  };
  const first = await answered(5, session);
  assert.equal(await resumes(first, session), 200, 'alone, an ended stream over the bound is kept');
  // Another session's answer ends after it: the bound is the front's, all sessions together.
  const second = await answered(6, other);
  assert.equal(await resumes(first, session), 400, 'the stream that ended first is forgotten early');
  assert.equal(await resumes(second, other), 200, 'the newest is kept');
});

test("a session cannot resume another session's stream, and a made-up id resumes nothing", async (t) => {
  const { url, session } = await gateway(t);
  const other = await rawSession(url);
  const post = await openSse(url, call(4, 'progress', { steps: 1 }, { progressToken: 'tok' }), {
    'mcp-session-id': session,
  });
  await post.ended;
  const id = post.events.items[0]!.id!;
  const stolen = await openSse(url, undefined, { 'mcp-session-id': other, 'last-event-id': id });
  assert.equal(stolen.status, 400);
  for (const made of ['0', 'AAAAAAAAAAAAAAAAAAAAAA.0', `${id.split('.')[0]}.999`]) {
    const res = await openSse(url, undefined, { 'mcp-session-id': session, 'last-event-id': made });
    assert.equal(res.status, 400, `Last-Event-ID ${made}`);
  }
  const mine = await openSse(url, undefined, { 'mcp-session-id': session, 'last-event-id': id });
  assert.equal(mine.status, 200, 'its own session resumes it');
  mine.cut();
});

test('with pollAfterMs, a long call ends its connection without its answer and the host polls for it', async (t) => {
  const { url, session } = await gateway(t, { pollAfterMs: 50, retryMs: 10 });
  const headers = { 'mcp-session-id': session };
  const post = await openSse(url, call(5, 'elicit', { message: 'later' }), headers);
  // The question stays pending, so the call cannot end: switchboard closes the connection itself.
  await post.ended;
  const seen: SseEvent[] = post.events.items;
  assert.equal(seen[0]!.retry, 10);
  assert.ok(!seen.some((e) => e.message && isAnswer(5)(e.message)));
  // The question came before the close or after it (a slow backend): a polling host gets it either way.
  const asked = await pollFor(url, headers, post, (m) => m.method === 'elicitation/create');
  await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: asked.event.message!.id, result: { action: 'decline' } }),
  });
  const answered = await pollFor(url, headers, asked.conn, isAnswer(5));
  assert.match(JSON.stringify(answered.event.message), /decline/);
});

/**
 * What a polling host does: reads `conn` until `match` arrives or the stream ends, then resumes from
 * the last event it saw, again and again, after the retry interval.
 */
async function pollFor(
  url: string,
  headers: Record<string, string>,
  conn: SseConnection,
  match: (m: Record<string, unknown>) => boolean,
): Promise<{ event: SseEvent; conn: SseConnection }> {
  let lastId: string | undefined;
  for (;;) {
    const event = await Promise.race([nextMessage(conn, match), conn.ended.then(() => undefined)]);
    const found = event ?? conn.events.items.find((e) => e.message !== undefined && match(e.message));
    if (found) return { event: found, conn };
    lastId = conn.events.items.at(-1)?.id ?? lastId;
    assert.ok(lastId, 'the stream gave an event id to resume from');
    await new Promise((resolve) => setTimeout(resolve, 10));
    conn = await openSse(url, undefined, { ...headers, 'last-event-id': lastId });
  }
}

test('a host that resumes in time keeps its call past http.sessions.detachedCallMs', async (t) => {
  const detachedCallMs = 2000;
  const sb = await startGateway(t, {
    servers: { p: probe('p') },
    audit: { enabled: false },
    http: { sessions: { detachedCallMs } },
  });
  const url = httpUrl(sb);
  const session = await rawSession(url, { elicitation: {} });
  const headers = { 'mcp-session-id': session };
  const post = await openSse(url, call(1, 'elicit', { message: 'go on?' }), headers);
  const asked = await nextMessage(post, (m) => m.method === 'elicitation/create');
  post.cut();
  await post.ended;
  const resumed = await openSse(url, undefined, { ...headers, 'last-event-id': asked.id! });
  assert.equal(resumed.status, 200);
  // Attached all along, well past the bound: the call is still waiting for its answer.
  await new Promise((resolve) => setTimeout(resolve, detachedCallMs * 1.5));
  const answered = await acceptElicitation(url, headers, asked);
  assert.equal(answered.status, 202);
  const result = await nextMessage(resumed, isAnswer(1));
  assert.match(JSON.stringify(result.message), /"action\\":\\"accept\\"/);
});
