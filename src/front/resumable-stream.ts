// One resumable SSE stream of a legacy (2025-11-25) session: every event carries an id naming the
// stream and its place in it, the last events are kept (bounded by count and bytes) so a host whose
// connection dropped resumes with GET and Last-Event-ID, and what is sent while no connection is
// attached waits in the same buffer. An ended stream stays resumable for a while (keepMs), so a
// host that lost the final answer still gets it. A POST's stream opens only with its first message
// (or PRIMING_HOLD_MS): a small answer that comes first is the whole response, as plain JSON.
import type { ServerResponse } from 'node:http';
import { stringifyWire, wireBytes, type WireText } from '../jsonrpc/wire-write.js';
import { answerJson } from './json-answer.js';
import { randomId } from './random-id.js';
import {
  chunkBytes,
  idEvent,
  primingEvent,
  SSE_HEADERS,
  textEvent,
  writeChunk,
  type SseChunk,
  type StreamCap,
} from './sse-stream.js';
import type { StreamReplay } from './stream-replay.js';

/**
 * How long a POST's response waits for its first message before it opens as an SSE stream. A call
 * answered within it with a small answer (most tool calls) is answered as plain JSON, in one write:
 * the host parses no stream, and there is nothing to keep for a resume, as no event id went out. A
 * call that sends something first, or is slower, gets the headers and priming event then, so the
 * host can resume from there.
 */
export const PRIMING_HOLD_MS = 20;

/**
 * The largest answer sent as plain JSON. A larger one goes as an SSE event after the priming
 * event, in the same write: a connection cut while its body is under way has given the host the
 * id to resume from, and the answer is kept for it. A small one leaves whole or not at all.
 */
export const JSON_ANSWER_MAX_BYTES = 16 * 1024;

/** Who holds a stream: told when it has ended and when it can no longer be resumed. */
export interface StreamOwner {
  /**
   * The stream ended (its answer sent); it stays resumable for keepMs unless forgotten sooner.
   * True: the owner forgets it then (the front's ended streams, one timer for all); false: the
   * stream keeps a timer of its own.
   */
  ended(stream: ResumableStream): boolean;
  /** The stream can no longer be resumed (ended or abandoned, and keepMs passed, or let go early). */
  forget(stream: ResumableStream): void;
}

interface Kept {
  seq: number;
  /** As written: a large string that came in as bytes is kept as those bytes. */
  chunk: SseChunk;
  bytes: number;
}

export class ResumableStream {
  /** 128 random bits: a stream is found only by whoever was sent one of its ids. */
  readonly id = randomId();
  private seq = 0;
  private readonly kept: Kept[] = [];
  #keptBytes = 0;
  /** The last seq dropped from the buffer: a resume from before it would miss events. */
  private droppedThrough = 0;
  private res: ServerResponse | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private forgetTimer: NodeJS.Timeout | undefined;
  /** Ends the hold on a POST connection's response (PRIMING_HOLD_MS). */
  private holdTimer: NodeJS.Timeout | undefined;
  /** The headers of a held response: nothing is written to it until the hold ends. */
  private heldHeaders: Record<string, string> | undefined;
  /** A connection was attached before: later ones are resumes. */
  private resumed = false;
  /** Its connection closed while held, before any event id of it went out: no host can name it. */
  private unnamed = false;
  /** What happens when no connection is attached for `ms` before the stream ends (whenUnattended). */
  private unattended: { ms: number; then: () => void; timer?: NodeJS.Timeout | undefined } | undefined;
  ended = false;
  /** Its kept events are views of the front's ring of ended streams (keepIn). */
  private inRing = false;

  constructor(
    private readonly replay: StreamReplay,
    private readonly cap: StreamCap,
    private readonly owner: StreamOwner,
    /** POST streams are polled (pollAfterMs); the session's GET stream is not. */
    private readonly polled: boolean,
  ) {}

  /** Bytes its kept events hold, counted as written. */
  get keptBytes(): number {
    return this.#keptBytes;
  }

  /** Whether a connection is attached now. */
  get attached(): boolean {
    return this.res !== undefined;
  }

  /**
   * Attaches a connection: headers, a priming event (an id and `retry`, so the host can come back
   * even before any message), then every kept event after `after`. False, with nothing written,
   * when events after `after` are no longer all kept. The POST's own connection holds its response
   * for the first message (PRIMING_HOLD_MS); one already waiting to be replayed goes at once.
   */
  attach(res: ServerResponse, headers: Record<string, string> = {}, after = 0): boolean {
    if (after < this.droppedThrough || after > this.seq) return false;
    // A resume while the old connection looks open: the host has given it up, so it goes.
    if (this.res && this.res !== res) {
      this.openHeld();
      this.res.end();
    }
    this.res = res;
    clearTimeout(this.unattended?.timer);
    // An ended stream is forgotten keepMs after it ended, however often it is resumed.
    if (!this.ended) clearTimeout(this.forgetTimer);
    const first = !this.resumed;
    res.once('close', () => this.detach(res));
    if (first && this.polled && !this.ended && !this.kept.some((k) => k.seq > after)) {
      this.heldHeaders = headers;
      this.holdTimer = setTimeout(() => this.openHeld(), PRIMING_HOLD_MS);
      this.holdTimer.unref();
    } else if (!this.open(res, headers, after)) return true;
    this.resumed = true;
    if (this.ended) res.end();
    // Only the POST's own connection is closed for polling: the host that came back is served on
    // the resumed one until the answer (a client that resumes once must not be cut again).
    else if (first && this.polled && this.replay.pollAfterMs !== undefined) {
      clearTimeout(this.pollTimer);
      this.pollTimer = setTimeout(() => this.poll(res), this.replay.pollAfterMs);
      this.pollTimer.unref();
    }
    return true;
  }

  /**
   * Writes the SSE headers, the priming event and the kept events after `after`; false if cut.
   * `corked`: `res` is corked, so the headers and priming event wait to leave with the first event.
   */
  private open(res: ServerResponse, headers: Record<string, string>, after: number, corked = false): boolean {
    // Answered by someone else already (a failure answered whole while the response was held):
    // this connection is done with.
    if (res.headersSent) {
      this.detach(res);
      return false;
    }
    // Not flushed on their own: the priming event below carries the headers in the same write.
    res.writeHead(200, { ...headers, ...SSE_HEADERS });
    if (!this.push(primingEvent(`${this.id}.${after}`, this.replay.retryMs))) return false;
    // Kept back by the cork, they were never sent: not the reader's backlog (writeChunk's cap).
    const held = corked ? res.writableLength : 0;
    // Events in the front's ring are copied out: a slow reader's socket holds what it was given
    // until it is written, and the ring's bytes may by then belong to another stream.
    for (const k of this.kept)
      if (k.seq > after && !this.push(this.inRing ? Buffer.from(k.chunk as Buffer) : k.chunk, held))
        return false;
    return true;
  }

  /**
   * Calls `then` once if, before the stream ends, no connection is attached to it for `ms` on end
   * (its host went away and did not come back): the bound on a call nobody is waiting for.
   */
  whenUnattended(ms: number, then: () => void): void {
    this.unattended = { ms, then };
    if (!this.res && !this.ended) this.armUnattended();
  }

  private armUnattended(): void {
    const u = this.unattended;
    if (!u) return;
    clearTimeout(u.timer);
    u.timer = setTimeout(() => {
      if (this.res || this.ended) return;
      this.unattended = undefined;
      u.then();
    }, u.ms);
    u.timer.unref();
  }

  /**
   * Sends (or, with no connection attached, keeps for a resume) one JSON-RPC message; `last` ends
   * the stream with it, in one write with the end of the response (one system call, not two).
   */
  write(message: unknown, last = false): void {
    if (this.ended) return;
    const heldHeaders = this.unhold();
    const text = stringifyWire(message);
    if (heldHeaders && last && wireBytes(text) <= JSON_ANSWER_MAX_BYTES)
      return this.answerWhole(this.res!, heldHeaders, text);
    const seq = ++this.seq;
    const chunk = idEvent(`${this.id}.${seq}`, textEvent(text));
    const bytes = chunkBytes(chunk);
    this.kept.push({ seq, chunk, bytes });
    this.#keptBytes += bytes;
    while (
      this.kept.length > this.replay.maxEvents ||
      (this.#keptBytes > this.replay.maxBytes && this.kept.length > 1)
    ) {
      const old = this.kept.shift()!;
      this.#keptBytes -= old.bytes;
      this.droppedThrough = old.seq;
    }
    // One write: the headers, the priming event and this event (and, with `last`, the response's
    // end: res.end() uncorks).
    if (heldHeaders || last) this.res?.cork();
    if (heldHeaders) this.open(this.res!, heldHeaders, 0, true);
    else this.push(chunk);
    if (last) this.end();
    else if (heldHeaders) this.res?.uncork();
  }

  /**
   * The answer came first, within the hold: it is the whole response, as plain JSON. The host was
   * given no event id, so nothing of this stream can be resumed: it is forgotten now.
   */
  private answerWhole(res: ServerResponse, headers: Record<string, string>, body: WireText): void {
    this.over();
    this.owner.forget(this);
    if (!res.headersSent && !res.destroyed && !res.writableEnded) answerJson(res, body, headers);
  }

  /** Ends the hold: the response opens as an SSE stream now (PRIMING_HOLD_MS passed, or it ends). */
  private openHeld(): void {
    const heldHeaders = this.unhold();
    if (heldHeaders && this.res) this.open(this.res, heldHeaders, 0);
  }

  /** No hold any more; the headers it held, if there was one (nothing of them was written). */
  private unhold(): Record<string, string> | undefined {
    if (this.holdTimer === undefined) return undefined;
    clearTimeout(this.holdTimer);
    this.holdTimer = undefined;
    const headers = this.heldHeaders;
    this.heldHeaders = undefined;
    return headers;
  }

  /** The stream is complete: its connection ends; it stays resumable for keepMs. */
  end(): void {
    if (this.ended) return;
    this.over();
    // Ended with no answer (a cancelled call): the host gets the stream, and its end.
    this.openHeld();
    this.res?.end();
    // Nobody can come back for it: nothing of it is kept.
    if (this.unnamed) return this.owner.forget(this);
    if (!this.owner.ended(this)) this.scheduleForget();
  }

  /**
   * Nothing more will be written: the stream's timers stop, and an ended stream, kept for keepMs
   * thousands at a time, lets go of what only a stream under way needs (the call's cancellation,
   * with what that holds).
   */
  private over(): void {
    this.ended = true;
    clearTimeout(this.pollTimer);
    clearTimeout(this.unattended?.timer);
    this.pollTimer = undefined;
    this.unattended = undefined;
  }

  /**
   * Moves the kept events into `region` (exactly keptBytes long, in the front's ring of ended
   * streams), each as a view of it, so the buffers they were read into can be freed young.
   */
  keepIn(region: Buffer): void {
    // A region of another size would take the events cut short (or trailing bytes) without a word.
    if (region.length !== this.#keptBytes)
      throw new Error(`kept ${this.#keptBytes} bytes of events, given ${region.length} to move them into`);
    let at = 0;
    for (const k of this.kept) {
      const start = at;
      const parts = typeof k.chunk === 'string' || Buffer.isBuffer(k.chunk) ? [k.chunk] : k.chunk.parts;
      for (const part of parts)
        at += typeof part === 'string' ? region.write(part, at) : part.copy(region, at);
      if (at - start !== k.bytes) throw new Error(`an event of ${k.bytes} bytes wrote ${at - start}`);
    }
    // Only once all are in: a stream whose events did not move keeps its own.
    at = 0;
    for (const k of this.kept) k.chunk = region.subarray(at, (at += k.bytes));
    this.inRing = true;
  }

  /** No longer resumable: keepMs has passed, or its owner keeps too much for ended streams. */
  forgetNow(): void {
    clearTimeout(this.forgetTimer);
    // Its place in the ring is another stream's from now on.
    this.droppedThrough = this.seq;
    this.kept.length = 0;
    this.#keptBytes = 0;
    this.owner.forget(this);
  }

  /** Ends the stream and forgets it now (its session is closing). */
  close(): void {
    this.openHeld();
    this.ended = true;
    clearTimeout(this.pollTimer);
    clearTimeout(this.unattended?.timer);
    clearTimeout(this.forgetTimer);
    this.res?.end();
    this.res = undefined;
  }

  /** Writes to the attached connection; a reader too far behind loses the connection, not the events. */
  private push(chunk: SseChunk, held = 0): boolean {
    const res = this.res;
    if (!res) return false;
    if (writeChunk(res, chunk, this.cap, held)) return true;
    this.detach(res);
    return false;
  }

  /** Closes the connection without ending the stream: the host comes back after `retry`. */
  private poll(res: ServerResponse): void {
    if (this.res !== res || this.ended) return;
    this.openHeld();
    res.end();
    this.detach(res);
  }

  private detach(res: ServerResponse): void {
    if (this.res !== res) return;
    this.res = undefined;
    clearTimeout(this.pollTimer);
    // Closed while held: the host was given no event id (the hold keeps back the priming event).
    if (this.unhold()) this.unnamed = true;
    if (!this.ended) this.armUnattended();
    // A POST stream lives as long as its call; a GET stream with nobody to resume it is abandoned.
    if (!this.ended && !this.polled) this.scheduleForget();
  }

  private scheduleForget(): void {
    clearTimeout(this.forgetTimer);
    this.forgetTimer = setTimeout(() => {
      // An ended stream goes even if a reader still holds its connection: nothing more comes.
      if (this.ended || !this.res) this.owner.forget(this);
    }, this.replay.keepMs);
    this.forgetTimer.unref();
  }
}
