// What a caller may start: its share of concurrent calls (limits.maxCallsPerSession, with a short
// queue behind it, limits.maxQueuedPerSession), its rate (limits.sessionRate), and nothing new
// from hosts once a stop is draining. It also counts the host calls under way, so a stop can wait
// for them, and cut those still running at its deadline: they end with the `draining` error rather
// than vanish with the connection, and their backends are told (notifications/cancelled).
//
// Each caller has its own slots and its own queue: a caller that floods waits behind itself, never
// in front of anyone else, so every other caller keeps its throughput. A host caller is one
// session; a backend calling over the bridge is one caller however many connections it opens.
// An operator's call through the admin API (`switchboard call`) is drained as a host's is.
import { TokenBucket } from '../token-bucket.js';
import type { Config } from '../config/schema.js';
import { LocalError } from '../errors/errors.js';
import { InFlightMap } from '../jsonrpc/in-flight-map.js';
import type { CallContext } from '../call/context.js';
import { linkSignals } from '../call/signals.js';
import { abortOf, setAbort } from '../call/new-call.js';

interface Waiter {
  ctx: CallContext;
  admit: () => void;
  refuse: (err: unknown) => void;
}

interface Slots {
  under: number;
  queue: Waiter[];
}

export class Admission {
  /** Host calls under way, each with how a stop's deadline cuts it (see cutter). */
  private readonly hostCalls = new InFlightMap<CallContext, (reason: Error) => void>();
  private draining = false;
  private drained: (() => void) | undefined;
  private readonly slots = new InFlightMap<string, Slots>();
  /** The sub-calls of each call that makes some (see admitWithin). */
  private readonly within = new WeakMap<CallContext, Slots>();
  private readonly rates = new Map<string, TokenBucket>();

  constructor(private limits: Config['limits']) {}

  /** Calls holding a slot and calls waiting in a queue, over every caller (metrics, status). */
  load(): { admitted: number; queued: number } {
    let admitted = 0;
    let queued = 0;
    for (const s of this.slots.values()) {
      admitted += s.under;
      queued += s.queue.length;
    }
    return { admitted, queued };
  }

  /** New limits (a reload): they apply to calls admitted from now on; calls under way keep going. */
  setLimits(limits: Config['limits']): void {
    if (JSON.stringify(limits.sessionRate) !== JSON.stringify(this.limits.sessionRate)) this.rates.clear();
    this.limits = limits;
    for (const [key, s] of this.slots) {
      this.next(s);
      this.forget(this.slots, key, s);
    }
    // A parent's waiting sub-calls are let in as their siblings end.
  }

  /**
   * Admits a call and returns the release to call when it ends; when its caller's slots are all
   * taken, a promise of that release, settled when its turn comes. Throws (or rejects with) the
   * error its caller gets. Bridge calls are admitted while draining: a draining host call may need
   * them to finish.
   */
  admit(ctx: CallContext): (() => void) | Promise<() => void> {
    const key = callerKey(ctx);
    const host = drained(ctx);
    if (host && this.draining) throw shuttingDown();
    this.takeRate(key);
    let s = this.slots.get(key);
    if (!s) this.slots.set(key, (s = { under: 0, queue: [] }));
    const slots = s;
    const { maxCallsPerSession: max, maxQueuedPerSession: depth } = this.limits;
    // Admitted at once (the common case) without a promise: the hot path stays synchronous.
    if (slots.under < max && slots.queue.length === 0) return this.take(key, slots, ctx);
    if (slots.queue.length >= depth) {
      const why =
        depth === 0
          ? `Too many calls under way in this session (limits.maxCallsPerSession: ${max})`
          : `Too many calls in this session: ${max} under way (limits.maxCallsPerSession) and ${depth} waiting (limits.maxQueuedPerSession)`;
      throw new LocalError('queue_full', why);
    }
    return this.wait(
      slots,
      ctx,
      () => this.take(key, slots, ctx),
      () => this.forget(this.slots, key, slots),
    );
  }

  /**
   * Admits a call made inside an admitted one (a handler's sub-call, a script's tool call, a
   * workflow step): it counts against its caller's rate and takes no slot of its caller's, since
   * its parent's covers it and waiting for another could wait forever behind that parent. At most
   * limits.maxCallsPerSession of one call's sub-calls run at once (per call: a sub-call's own
   * sub-calls have a share of their own); the others wait, without a bound, for one of them to end.
   */
  admitWithin(ctx: CallContext, parent: CallContext): (() => void) | Promise<() => void> {
    this.takeRate(callerKey(ctx));
    let s = this.within.get(parent);
    if (!s) this.within.set(parent, (s = { under: 0, queue: [] }));
    const slots = s;
    const take = () =>
      this.held(slots, () => {
        this.next(slots);
        this.forget(this.within, parent, slots);
      });
    if (slots.under < this.limits.maxCallsPerSession && slots.queue.length === 0) return take();
    return this.wait(slots, ctx, take, () => this.forget(this.within, parent, slots));
  }

  /**
   * Queues the call on `s`: the promise of its release, settled when its turn comes. A call
   * aborted while it waits leaves the queue with its abort's reason (and an idle `s` is forgotten).
   */
  private wait(s: Slots, ctx: CallContext, take: () => () => void, forget: () => void): Promise<() => void> {
    return new Promise<() => void>((resolve, reject) => {
      const waiter: Waiter = {
        ctx,
        admit: () => {
          ctx.signal.removeEventListener('abort', onAbort);
          resolve(take());
        },
        refuse: (err) => {
          ctx.signal.removeEventListener('abort', onAbort);
          reject(err);
        },
      };
      // A call cancelled while it waits leaves the queue at once; it never reached a backend.
      const onAbort = () => {
        const at = s.queue.indexOf(waiter);
        if (at >= 0) s.queue.splice(at, 1);
        forget();
        reject(ctx.signal.reason);
      };
      if (ctx.signal.aborted) return reject(ctx.signal.reason);
      ctx.signal.addEventListener('abort', onAbort, { once: true });
      s.queue.push(waiter);
    });
  }

  private takeRate(key: string): void {
    const rate = this.limits.sessionRate;
    if (!rate) return;
    let bucket = this.rates.get(key);
    if (!bucket) this.rates.set(key, (bucket = new TokenBucket(rate)));
    if (!bucket.take()) {
      throw new LocalError(
        'rate_limited',
        `Rate limit: this session may make ${rate.perSecond} calls per second (limits.sessionRate)`,
      );
    }
  }

  /** Takes one of the caller's slots; the release (once only) lets the next call in. One closure: every call makes it. */
  private take(key: string, s: Slots, ctx: CallContext): () => void {
    s.under++;
    const cut = drained(ctx) ? cutter(ctx) : undefined;
    if (cut) this.hostCalls.set(ctx, cut.cut);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      s.under--;
      this.next(s);
      this.forget(this.slots, key, s);
      if (!cut) return;
      cut.unlink?.();
      this.hostCalls.delete(ctx);
      this.drained?.();
    };
  }

  /** Takes a slot of `s` (a call's sub-calls); the release (once only) frees it and calls `freed`. */
  private held(s: Slots, freed: () => void): () => void {
    s.under++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      s.under--;
      freed();
    };
  }

  /** Lets the next waiting calls of `s` in, as far as the share allows. */
  private next(s: Slots): void {
    while (s.under < this.limits.maxCallsPerSession && s.queue.length > 0) s.queue.shift()!.admit();
  }

  /** Forgets `s` (a caller's slots, a call's sub-calls) once it holds and awaits nothing. */
  private forget<K>(map: { get(k: K): Slots | undefined; delete(k: K): unknown }, key: K, s: Slots): void {
    if (s.under === 0 && s.queue.length === 0 && map.get(key) === s) map.delete(key);
  }

  /** The error a call a stop cut ends with, whatever its backend or handler said when it was aborted. */
  cutReason(ctx: CallContext): LocalError | undefined {
    // Read without making the call's signal: this runs for every call that ends in an error.
    const abort = abortOf(ctx);
    const reason: unknown = abort.aborted ? abort.reason : undefined;
    return reason instanceof LocalError && reason.code === 'draining' ? reason : undefined;
  }

  /** Forgets a closed host session's rate bucket (a backend's is kept across its connections). */
  sessionClosed(key: string): void {
    this.rates.delete(key);
  }

  /**
   * Refuses new host calls and waits up to `ms` for those under way; cuts the ones still running
   * then (they end with the `draining` error, see cutReason) and returns them once they have ended. Host calls still waiting for a
   * slot never reached a backend: they are refused at once.
   */
  async drain(ms: number): Promise<CallContext[]> {
    this.draining = true;
    for (const s of this.slots.values()) {
      const hosts = s.queue.filter((w) => drained(w.ctx));
      s.queue = s.queue.filter((w) => !drained(w.ctx));
      for (const w of hosts) w.refuse(shuttingDown());
    }
    const hadCalls = this.hostCalls.size > 0;
    if (hadCalls) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        this.drained = () => {
          if (this.hostCalls.size > 0) return;
          clearTimeout(timer);
          resolve();
        };
      });
      this.drained = undefined;
    }
    const cut = [...this.hostCalls.keys()];
    if (cut.length > 0) {
      const reason = new LocalError(
        'draining',
        `switchboard is shutting down: the call was cut after shutdown.drainMs (${ms} ms)`,
      );
      const ended = new Promise<void>((resolve) => {
        this.drained = () => {
          if (this.hostCalls.size === 0) resolve();
        };
      });
      for (const cut of this.hostCalls.values()) cut(reason);
      // A call ends at once on its abort (a backend request, a handler and a question to the
      // caller all listen to it); the bound is for one that does not, which is then left behind.
      await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, CUT_GRACE_MS).unref())]);
      this.drained = undefined;
    }
    // An answer is written in the turn its call settles in: let the last ones leave before the
    // fronts close their connections.
    if (hadCalls) await new Promise((resolve) => setImmediate(resolve));
    return cut;
  }
}

/** How long calls cut at a stop's deadline get to end with their error before the fronts close. */
const CUT_GRACE_MS = 1000;

/**
 * Calls a stop drains and then cuts: those from outside switchboard, a host's or an operator's
 * (the admin API), whose caller waits for an answer. Bridge and in-process calls serve them.
 */
function drained(ctx: CallContext): boolean {
  return ctx.caller.kind === 'host' || ctx.caller.kind === 'admin';
}

/**
 * How a stop ends a host call without it counting as the caller's cancellation (its session would
 * send nothing then): by the door's own cut when the door gave one (nothing to set up), else by a
 * signal of the call's own linked to the caller's, which the call runs under from here on.
 */
function cutter(ctx: CallContext): { cut: (reason: Error) => void; unlink?: () => void } {
  if (ctx.cut) return { cut: ctx.cut };
  const link = linkSignals([abortOf(ctx)]);
  setAbort(ctx, link.source);
  return { cut: link.abort, unlink: link.unlink };
}

function callerKey(ctx: CallContext): string {
  return ctx.caller.kind === 'backend' ? `backend:${ctx.caller.id}` : ctx.reply.sessionKey;
}

function shuttingDown(): LocalError {
  return new LocalError('draining', 'switchboard is shutting down');
}
