// The ring the HTTP front keeps ended streams' events in: whatever sizes end in whatever order,
// and whichever streams are let go early, a stream still resumable replays exactly its own events
// (never bytes another stream wrote over them), the streams forgotten are the first to end, the
// newest is always kept, and all kept together stay within the bound.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, get, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { EndedStreams, type RingStream } from '../../src/front/ended-streams.js';
import { ResumableStream } from '../../src/front/resumable-stream.js';

const MAX = 64 * 1024;
const REPLAY = { maxEvents: 100, maxBytes: 1 << 30, keepMs: 600_000, maxEndedBytes: MAX, retryMs: 1000 };
const CAP = { maxUnreadBytes: 1 << 30, overflowed: () => assert.fail('nothing reads slowly here') };

/** A deterministic random sequence, so a failure can be run again. */
function random(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
}

/** A message whose text is `chars` long, from characters of one to four UTF-8 bytes. */
function message(tag: number, chars: number): object {
  const alphabet = ['a', 'é', '✓', '𝄞', '"', '\n'];
  let text = '';
  for (let i = 0; text.length < chars; i++) text += alphabet[(tag + i) % alphabet.length];
  return { jsonrpc: '2.0', method: 'notifications/message', params: { tag, text } };
}

/** What a resume from before the first event gets: the body of the SSE response. */
async function replay(url: string, stream: ResumableStream): Promise<string | number> {
  const res = await fetch(`${url}/${stream.id}`);
  return res.status === 200 ? await res.text() : res.status;
}

test('streams kept in the ring replay their own events, the first ended go first, within the bound', async (t) => {
  const forgotten = new Set<ResumableStream>();
  const ended = new EndedStreams(MAX, REPLAY.keepMs);
  const owner = {
    ended: (s: ResumableStream) => ended.add(s),
    forget: (s: ResumableStream) => {
      forgotten.add(s);
      ended.delete(s);
    },
  };
  const byId = new Map<string, ResumableStream>();
  const server = createServer((req, res: ServerResponse) => {
    const stream = byId.get(req.url!.slice(1));
    if (!stream || forgotten.has(stream) || !stream.attach(res)) res.writeHead(400).end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => server.close());
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const next = random(17);
  const closed = new Set<ResumableStream>();
  const live: { stream: ResumableStream; events: string[]; endedAt: number }[] = [];
  for (let n = 0; n < 120; n++) {
    const stream = new ResumableStream(REPLAY, CAP, owner, true);
    byId.set(stream.id, stream);
    // Mostly small, some near the bound, now and then one over it; one to three events each.
    const roll = next();
    const chars = roll < 0.6 ? 50 + next() * 2000 : roll < 0.95 ? 4000 + next() * 30_000 : MAX + 100;
    const count = 1 + Math.floor(next() * 3);
    const events: string[] = [];
    for (let e = 1; e <= count; e++) {
      const m = message(n * 10 + e, Math.floor(chars / count));
      events.push(`id: ${stream.id}.${e}\nevent: message\ndata: ${JSON.stringify(m)}\n\n`);
      stream.write(m, e === count);
    }
    live.push({ stream, events, endedAt: n });
    // Now and then a session closes: its stream is let go before it would be evicted.
    if (next() < 0.1 && live.length > 2) {
      const gone = live[Math.floor(next() * (live.length - 1))]!.stream;
      closed.add(gone);
      gone.close();
      owner.forget(gone);
    }

    const kept = live.filter((l) => !forgotten.has(l.stream));
    assert.ok(
      kept.some((l) => l.stream === stream),
      'the newest is kept',
    );
    const bytes = kept.reduce((sum, l) => sum + l.stream.keptBytes, 0);
    assert.ok(kept.length === 1 || bytes <= MAX, `kept ${bytes} bytes, over ${MAX}`);
    for (const l of kept) {
      const body = await replay(url, l.stream);
      const expected = `id: ${l.stream.id}.0\nretry: 1000\ndata:\n\n${l.events.join('')}`;
      assert.equal(body, expected, `stream ${l.endedAt} replays its own events after ${n}`);
    }
  }
  // The streams the bound made go (not those a session let go) all ended before any kept one.
  const evicted = live.filter((l) => forgotten.has(l.stream) && !closed.has(l.stream));
  const firstKept = live.find((l) => !forgotten.has(l.stream))!.endedAt;
  assert.ok(evicted.length > 50, 'the bound made streams go');
  for (const l of evicted) assert.ok(l.endedAt < firstKept, `stream ${l.endedAt} went before ${firstKept}`);
  for (const l of evicted) assert.equal(await replay(url, l.stream), 400);
});

test('a resume hands its socket bytes of its own, which later streams in the ring cannot change', async (t) => {
  const max = 8 * 1024 * 1024;
  const ended = new EndedStreams(max, REPLAY.keepMs);
  const owner = {
    ended: (s: ResumableStream) => ended.add(s),
    forget: (s: ResumableStream) => ended.delete(s),
  };
  const replayOf = { ...REPLAY, maxEndedBytes: max };
  // Three answers of 3 MiB: the third takes the place of the first in the ring.
  const answer = (tag: number) => {
    const stream = new ResumableStream(replayOf, CAP, owner, true);
    stream.write({ jsonrpc: '2.0', id: tag, result: { text: String(tag).repeat(3 * 1024 * 1024) } }, true);
    return stream;
  };
  const first = answer(1);
  // What the replay gives the response, and a copy of it as given: a socket that cannot send at
  // once keeps the buffer itself until it can.
  const given: { chunk: Buffer; copy: Buffer }[] = [];
  let attached!: () => void;
  const served = new Promise<void>((resolve) => (attached = resolve));
  const server = createServer((_req, res) => {
    const write = res.write.bind(res) as (chunk: unknown) => boolean;
    res.write = ((chunk: unknown) => {
      if (Buffer.isBuffer(chunk)) given.push({ chunk, copy: Buffer.from(chunk) });
      return write(chunk);
    }) as typeof res.write;
    assert.ok(first.attach(res));
    attached();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => server.close());
  const { port } = server.address() as AddressInfo;
  const res = await new Promise<IncomingMessage>((resolve) => get({ port, host: '127.0.0.1' }, resolve));
  await served;
  answer(2);
  answer(3);
  assert.ok(given.length > 0, 'the replay was written as bytes');
  for (const { chunk, copy } of given) assert.ok(chunk.equals(copy), 'a buffer given to the socket changed');
  res.resume();
  await once(res, 'end');
});

/** A stream as the ring sees it, that fills its region with its own byte. */
class Marked implements RingStream {
  region: Buffer | undefined;
  forgotten = false;
  constructor(
    readonly tag: number,
    readonly keptBytes: number,
    private readonly ring: EndedStreams,
  ) {}
  keepIn(region: Buffer): void {
    assert.equal(region.length, this.keptBytes);
    this.region = region.fill(this.tag);
  }
  forgetNow(): void {
    this.forgotten = true;
    this.ring.delete(this);
  }
  /** Kept, and its bytes still its own. */
  get intact(): boolean {
    return !this.forgotten && (this.region?.every((b) => b === this.tag) ?? true);
  }
}

test('the ring keeps every stream that fits, to the byte, and lets go of the first ended', () => {
  const ring = new EndedStreams(60, REPLAY.keepMs);
  const streams = [1, 2, 3, 4].map((tag) => new Marked(tag, 15, ring));
  for (const s of streams) ring.add(s);
  assert.ok(
    streams.every((s) => s.intact),
    'four of 15 bytes fill 60 exactly',
  );
  const fifth = new Marked(5, 15, ring);
  ring.add(fifth);
  assert.deepEqual(
    [...streams, fifth].map((s) => s.intact),
    [false, true, true, true, true],
  );
  // The newest goes with its session: its room is the next stream's, and nothing else need go.
  const small = new EndedStreams(40, REPLAY.keepMs);
  const [b, c, d] = [new Marked(7, 20, small), new Marked(8, 20, small), new Marked(9, 20, small)];
  small.add(b);
  small.add(c);
  small.add(d); // b goes, d takes its place at the start
  small.delete(d);
  const e = new Marked(10, 5, small);
  small.add(e);
  assert.deepEqual([b.intact, c.intact, e.intact], [false, true, true]);
});

test('no sequence of ends and early goings makes one kept stream’s bytes another’s', () => {
  const next = random(5);
  for (let round = 0; round < 300; round++) {
    const max = 8 + Math.floor(next() * 60);
    const ring = new EndedStreams(max, REPLAY.keepMs);
    const kept: Marked[] = [];
    for (let step = 0; step < 200; step++) {
      const op = next();
      if (op < 0.6) {
        // Small whole sizes, so streams often fit exactly; now and then one larger than the ring.
        const bytes = next() < 0.03 ? max + 1 : 1 + Math.floor(next() * max * 0.6);
        const s = new Marked(step % 256, bytes, ring);
        ring.add(s);
        kept.push(s);
        assert.ok(s.intact, 'the newest is kept');
      } else if (kept.length > 0) {
        // A session closes (any stream), or keepMs passes (the oldest).
        const at = op < 0.85 ? Math.floor(next() * kept.length) : 0;
        const [s] = kept.splice(at, 1);
        s!.forgotten = true;
        ring.delete(s!);
      }
      for (let i = kept.length - 1; i >= 0; i--) if (kept[i]!.forgotten) kept.splice(i, 1);
      for (const s of kept) assert.ok(s.intact, `round ${round} step ${step}: a kept stream was overwritten`);
      const total = kept.reduce((sum, s) => sum + s.keptBytes, 0);
      assert.ok(
        kept.length <= 1 || total <= max,
        `round ${round} step ${step}: ${total} bytes kept of ${max}`,
      );
    }
  }
});

/** Waits until `done()` holds, up to a deadline that only a stalled machine reaches. */
async function until(done: () => boolean, what: string): Promise<void> {
  for (const deadline = Date.now() + 10_000; !done(); await new Promise((r) => setTimeout(r, 5)))
    if (Date.now() > deadline) assert.fail(`still waiting: ${what}`);
}

test('keepMs after each ended, the ring forgets it, first ended first, one timer for all', async () => {
  const ring = new EndedStreams(1000, 50);
  const forgotten: number[] = [];
  const stream = (tag: number) => {
    const s = new Marked(tag, 10, ring);
    const forgetNow = s.forgetNow.bind(s);
    s.forgetNow = () => {
      forgotten.push(tag);
      forgetNow();
    };
    return s;
  };
  const [a, b, c] = [stream(1), stream(2), stream(3)];
  assert.equal(ring.add(a), true);
  assert.deepEqual(forgotten, [], 'not as it ends');
  await until(() => forgotten.length === 1, 'the first to go');
  // Ended after the timer went off: the ring sets it again for them.
  ring.add(b);
  ring.add(c);
  // A stream let go early (its session closed) is not forgotten a second time when its time comes.
  ring.delete(b);
  await until(() => forgotten.length === 2, 'the last to go');
  assert.deepEqual(forgotten, [1, 3]);
  assert.deepEqual([a.intact, b.intact, c.intact], [false, true, false]);
  // A stream with no events is not kept: it keeps a timer of its own (ResumableStream).
  assert.equal(ring.add(new Marked(4, 0, ring)), false);
});

test('a closed ring sets no timer: nothing holds it after its front has closed', async () => {
  const ring = new EndedStreams(1000, 10);
  const kept = new Marked(1, 10, ring);
  ring.add(kept);
  ring.close();
  // Past keepMs: a timer still set would have forgotten the stream (and held the ring till then).
  await new Promise((r) => setTimeout(r, 60));
  assert.equal(kept.forgotten, false);
});
