// A modern caller's call that a legacy backend paused with its questions: they are batched into
// one input_required result, and the caller's retry answers them and resumes the same call.
import { LocalError } from '../errors/errors.js';
import { LazyAbort, type AbortSource } from '../jsonrpc/lazy-abort.js';
import type { Params, Result } from '../jsonrpc/message.js';
import type { CallContext, Reply } from '../call/context.js';
import type { ModernExchange } from './modern-exchange.js';

/** How long questions are gathered into one input_required result (see PausedCall.poke). */
const BATCH_MS = 10;
const BATCH_MAX_MS = 50;

/**
 * One call from a modern caller, possibly paused on questions a legacy backend asked: it runs
 * once, and its questions and final outcome are collected for whichever exchange waits on it.
 */
export class PausedCall {
  /** The call's abort (the caller's cancellation, a refusal, a stop's cut): a signal only if asked for. */
  readonly abort = new LazyAbort();
  private readonly asks = new Map<string, Ask>();
  private settled: { result: Result } | { error: unknown } | undefined;
  private wake: (() => void) | undefined;
  private seq = 0;
  private timer: NodeJS.Timeout | undefined;
  private progressToken: unknown;
  private batch: NodeJS.Timeout | undefined;
  private firstAsk: number | undefined;
  ctx!: CallContext;
  readonly reply: Reply;

  constructor(
    private ex: ModernExchange | undefined,
    who: Pick<Reply, 'capabilities' | 'clientInfo' | 'logLevel' | 'sessionKey' | 'view'>,
  ) {
    this.reply = {
      ...who,
      era: 'modern',
      notify: (method, params) => {
        const p =
          method === 'notifications/progress' && this.progressToken !== undefined
            ? { ...params, progressToken: this.progressToken }
            : params;
        this.ex?.notify({ jsonrpc: '2.0', method, params: p });
      },
      waiting: () => this.asks.size > 0,
      refuse: (error) => {
        this.settle({ error });
        this.abort.abort(error);
        return error;
      },
      request: (method, params, signal) => this.ask(method, params, signal),
    };
  }

  run(ctx: CallContext, done: Promise<Result>): void {
    this.ctx = ctx;
    this.progressToken = ctx.params._meta?.progressToken;
    done.then(
      (result) => this.settle({ result }),
      (error: unknown) => this.settle({ error }),
    );
  }

  private settle(outcome: { result: Result } | { error: unknown }): void {
    // A paused call that ends meanwhile (a timeout, its backend gone) keeps its outcome for the
    // retry until the pause runs out.
    if (this.settled) return; // refused already: what the pipeline says after that is moot
    this.settled = outcome;
    this.poke();
  }

  result(): Result {
    const s = this.settled!;
    if ('error' in s) throw s.error;
    return s.result;
  }

  /** A backend's question: held until the caller's retry answers it. */
  private ask(method: string, params: Params | undefined, signal: AbortSignal): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      const key = `${method.replace(/[^A-Za-z0-9]+/g, '_')}_${++this.seq}`;
      const onAbort = () => {
        this.asks.delete(key);
        reject(new LocalError('cancelled', 'Request cancelled'));
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      this.asks.set(key, {
        method,
        params: withoutProgressToken(params),
        settle: (answer) => {
          signal.removeEventListener('abort', onAbort);
          resolve(answer);
        },
      });
      this.poke();
    });
  }

  /**
   * Wakes the waiting exchange: at once when the call ended; for a question, once no other has
   * come for BATCH_MS (at most BATCH_MAX_MS after the first), so questions a backend asks together
   * (over a pipe they arrive one by one) go out in one input_required result.
   */
  private poke(): void {
    clearTimeout(this.batch);
    const wake = () => {
      this.batch = undefined;
      this.firstAsk = undefined;
      const w = this.wake;
      this.wake = undefined;
      w?.();
    };
    // An ended call wakes its exchange now: waking only resolves a promise, so nothing runs
    // inside the caller, and a turn of the event loop per call is not spent waiting.
    if (this.settled) return wake();
    this.firstAsk ??= Date.now();
    const left = BATCH_MAX_MS - (Date.now() - this.firstAsk);
    this.batch = setTimeout(wake, Math.max(0, Math.min(BATCH_MS, left)));
  }

  next(signal: AbortSource): Promise<'done' | 'input' | 'cancelled'> {
    return new Promise((resolve) => {
      const onAbort = () => {
        this.wake = undefined;
        resolve('cancelled');
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      const check = () => {
        if (!this.settled && this.asks.size === 0) return void (this.wake = check);
        signal.removeEventListener('abort', onAbort);
        resolve(this.settled ? 'done' : 'input');
      };
      check();
    });
  }

  /** The open questions, as the input requests of an input_required result. */
  questions(): Record<string, { method: string; params?: Params }> {
    const out: Record<string, { method: string; params?: Params }> = {};
    for (const [key, a] of this.asks)
      out[key] = a.params === undefined ? { method: a.method } : { method: a.method, params: a.params };
    return out;
  }

  /** Answers the questions the retry answered; the rest stay open and are asked again. */
  answer(inputResponses: unknown): void {
    if (!isRecord(inputResponses)) return;
    for (const [key, value] of Object.entries(inputResponses)) {
      const ask = this.asks.get(key);
      if (!ask || !isRecord(value)) continue;
      this.asks.delete(key);
      ask.settle(value);
    }
  }

  /** No exchange waits on the call: it is cancelled unless a retry comes within `ms`. */
  pause(ms: number, forget: () => void): void {
    this.ex = undefined;
    this.timer = setTimeout(() => {
      forget();
      this.cancel('no retry answered its input requests in time');
    }, ms);
    this.timer.unref();
  }

  resume(ex: ModernExchange, progressToken: unknown): void {
    clearTimeout(this.timer);
    this.ex = ex;
    if (progressToken !== undefined) this.progressToken = progressToken;
  }

  cancel(why: string): void {
    this.cut(new LocalError('cancelled', why));
  }

  /**
   * Ends the call with `reason`: a cancellation (above), or a stop's deadline, which unlike a
   * cancellation of the exchange is no reason to send nothing: whoever waits on the call gets the
   * error it ends with.
   */
  readonly cut = (reason: Error): void => {
    clearTimeout(this.timer);
    this.abort.abort(reason);
  };
}

interface Ask {
  method: string;
  params: Params | undefined;
  settle(answer: Result): void;
}

/** A backend's own progress token means nothing to the caller an input request goes to. */
function withoutProgressToken(params: Params | undefined): Params | undefined {
  if (params?._meta?.progressToken === undefined) return params;
  const { progressToken: _dropped, ...meta } = params._meta;
  const out: Params = { ...params, _meta: meta };
  if (Object.keys(meta).length === 0) delete out._meta;
  return out;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
