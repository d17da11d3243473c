// The modern era (2026-07-28) on switchboard's fronts: each request carries its own version,
// capabilities and identity in `_meta` and is served on its own, with no session. Transports
// (stdio, HTTP) hand requests in here; the same pipeline serves them as it serves sessions.
//
// What a backend asks a caller mid-call becomes an `input_required` result:
//   - a legacy backend asks by a request of its own while the call waits: the call is paused
//     here, the question goes out as an input request, and the caller's retry (with
//     `inputResponses`) answers the waiting backend and resumes the same call;
//   - a modern backend answers `input_required` itself: it passes through, its requestState
//     wrapped in switchboard's, so the retry reaches the same backend.
// Either way the requestState the caller holds is sealed (AEAD) and bound to the caller, the
// method, the target and the arguments: a tampered, replayed-elsewhere or expired one is refused.
import { randomUUID } from 'node:crypto';
import { WIRE, WireError, LocalError, toWire } from '../errors/errors.js';
import type {
  JsonRpcNotification,
  JsonRpcResponse,
  JsonRpcRequest,
  Params,
  Result,
  WireErrorBody,
} from '../jsonrpc/message.js';
import type { Caller, CallContext, Reply } from '../call/context.js';
import { newCall } from '../call/new-call.js';
import { modernProblem, type ModernWire } from '../protocol/envelope.js';
import { META, SERVER_INFO } from '../protocol/versions.js';
import { canonicalJson, sha256 } from '../encoding/canonical-json.js';
import { isInputRequired } from './input-required.js';
import { methodSpec } from '../protocol/methods.js';
import type { Sealer } from './seal.js';

/** One request's way back to its client. */
export interface ModernExchange {
  /** A notification that belongs to the request (progress, a log line, a listen stream's news). */
  notify(message: JsonRpcNotification): void;
  /** Aborts when the client gives up on the request (its stream closed, or it cancelled it). */
  readonly signal: AbortSignal;
  /** What the request came with besides its body: its HTTP headers, when HTTP carried it. */
  readonly wire?: ModernWire | undefined;
}

/** A modern request's answer (HTTP takes its status from the error catalogue). */
export interface ModernAnswer {
  message: JsonRpcResponse;
}

export interface ModernHostOptions {
  /** Runs a call through the pipeline. */
  run(ctx: CallContext): Promise<void>;
  sealer: Sealer;
  /** How long a paused call waits for the caller's retry before it is cancelled. */
  inputTimeoutMs: number;
}

const STATE_PURPOSE = 'requestState';
/** How long questions are gathered into one input_required result (see PausedCall.poke). */
const BATCH_MS = 10;
const BATCH_MAX_MS = 50;

/** What switchboard's requestState holds. */
type State =
  | { k: 'park'; id: string; c: string; d: string; x: number }
  | { k: 'pass'; b: string; r?: number; s?: string; c: string; d: string; x: number };

export class ModernHost {
  /** Calls paused on a legacy backend's question, by id, until the caller's retry. */
  private readonly paused = new Map<string, PausedCall>();

  constructor(private readonly options: ModernHostOptions) {}

  /** Serves one modern request; undefined when it was cancelled (nothing is sent). */
  async serve(req: JsonRpcRequest, caller: Caller, ex: ModernExchange): Promise<ModernAnswer | undefined> {
    try {
      const result = await this.answer(req, caller, ex);
      if (result === undefined || ex.signal.aborted) return undefined;
      return { message: { jsonrpc: '2.0', id: req.id, result: decorate(req.method, result) } };
    } catch (err) {
      if (ex.signal.aborted) return undefined;
      return { message: { jsonrpc: '2.0', id: req.id, error: modernError(toWire(err)) } };
    }
  }

  /** Cancels paused calls (switchboard is stopping). */
  close(): void {
    for (const call of this.paused.values()) call.cancel('switchboard is stopping');
    this.paused.clear();
  }

  private async answer(req: JsonRpcRequest, caller: Caller, ex: ModernExchange): Promise<Result | undefined> {
    const params = req.params ?? {};
    // The envelope and the rest of the era's rules are the pipeline's protocol stage's to check.
    if (params.requestState !== undefined) return this.resume(req, caller, ex);
    // Answers without a state of ours answer nothing switchboard asked: they are dropped.
    const { inputResponses: _ignored, ...rest } = params;
    return this.call(req, caller, ex, rest);
  }

  /** Runs a call through the pipeline; pauses it if a legacy backend asks the caller something. */
  private call(
    req: JsonRpcRequest,
    caller: Caller,
    ex: ModernExchange,
    params: Params,
    resume?: { backend: string; replica?: number | undefined },
  ): Promise<Result | undefined> {
    const meta = params._meta ?? {};
    const paused = new PausedCall(ex, {
      capabilities: (meta[META.clientCapabilities] as Record<string, unknown>) ?? {},
      clientInfo: meta[META.clientInfo] as Record<string, unknown> | undefined,
      logLevel: meta[META.logLevel] as string | undefined,
      sessionKey: `modern:${caller.kind}:${caller.id}`,
    });
    const ctx = newCall({
      caller,
      method: req.method,
      requestId: req.id,
      params,
      signal: paused.signal,
      reply: paused.reply,
      resume,
      wire: ex.wire,
    });
    paused.run(
      ctx,
      this.options.run(ctx).then(() => ctx.result ?? {}),
    );
    return this.outcome(paused, req, caller, ex);
  }

  /** Waits for the call to end or to need input, whichever comes first. */
  private async outcome(
    call: PausedCall,
    req: JsonRpcRequest,
    caller: Caller,
    ex: ModernExchange,
  ): Promise<Result | undefined> {
    const what = await call.next(ex.signal);
    const bind = { c: principal(caller), d: digest(req), x: Date.now() + this.options.inputTimeoutMs };
    switch (what) {
      case 'cancelled':
        call.cancel('cancelled by the client');
        return undefined;
      case 'done': {
        const result = call.result();
        const backend = call.ctx.target?.backend;
        if (!isInputRequired(result) || backend === undefined) return result;
        // A modern backend's own question: passed on, its state inside ours.
        const state: State = { k: 'pass', b: backend, c: bind.c, d: bind.d, x: bind.x };
        // The retry must reach the replica that asked: the state behind its question is there.
        if (call.ctx.replica !== undefined) state.r = call.ctx.replica;
        if (typeof result.requestState === 'string') state.s = result.requestState;
        return { ...result, requestState: this.options.sealer.seal(STATE_PURPOSE, state) };
      }
      case 'input': {
        const id = randomUUID();
        this.paused.set(id, call);
        call.pause(this.options.inputTimeoutMs, () => this.paused.delete(id));
        const state: State = { k: 'park', id, ...bind };
        return {
          resultType: 'input_required',
          inputRequests: call.questions(),
          requestState: this.options.sealer.seal(STATE_PURPOSE, state),
        };
      }
    }
  }

  /** A retry after input_required: resumes the paused call, or retries the modern backend. */
  private async resume(req: JsonRpcRequest, caller: Caller, ex: ModernExchange): Promise<Result | undefined> {
    const params = req.params ?? {};
    const state = this.options.sealer.open(STATE_PURPOSE, params.requestState) as State | undefined;
    if (!state || state.c !== principal(caller) || state.d !== digest(req) || !(state.x > Date.now())) {
      throw new WireError(
        WIRE.INVALID_PARAMS,
        'Invalid requestState: not issued for this request, or expired',
      );
    }
    const answers = isRecord(params.inputResponses) ? params.inputResponses : {};
    if (state.k === 'pass') {
      const { requestState: _ours, ...rest } = params;
      const forwarded: Params = state.s === undefined ? rest : { ...rest, requestState: state.s };
      return this.call(req, caller, ex, forwarded, { backend: state.b, replica: state.r });
    }
    // A retry that answers a paused call resumes it rather than passing the pipeline again: the
    // protocol stage's rules are checked here for it.
    const problem = modernProblem(req.method, params, ex.wire);
    if (problem) throw problem;
    const call = this.paused.get(state.id);
    if (!call) {
      throw new WireError(
        WIRE.INVALID_PARAMS,
        'Invalid requestState: the call it belongs to is no longer waiting (it timed out or was cancelled)',
      );
    }
    this.paused.delete(state.id);
    call.resume(ex, params._meta?.progressToken);
    call.answer(answers);
    return this.outcome(call, req, caller, ex);
  }
}

/**
 * One call from a modern caller, possibly paused on questions a legacy backend asked: it runs
 * once, and its questions and final outcome are collected for whichever exchange waits on it.
 */
class PausedCall {
  private readonly controller = new AbortController();
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
    who: Pick<Reply, 'capabilities' | 'clientInfo' | 'logLevel' | 'sessionKey'>,
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
        this.controller.abort(error);
        return error;
      },
      request: (method, params, signal) => this.ask(method, params, signal),
    };
  }

  get signal(): AbortSignal {
    return this.controller.signal;
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
    if (this.settled) return void setImmediate(wake);
    this.firstAsk ??= Date.now();
    const left = BATCH_MAX_MS - (Date.now() - this.firstAsk);
    this.batch = setTimeout(wake, Math.max(0, Math.min(BATCH_MS, left)));
  }

  next(signal: AbortSignal): Promise<'done' | 'input' | 'cancelled'> {
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
  answer(responses: Record<string, unknown>): void {
    for (const [key, value] of Object.entries(responses)) {
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
    clearTimeout(this.timer);
    this.controller.abort(new LocalError('cancelled', why));
  }
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

/** Who may present a requestState: the caller it was issued to. */
function principal(caller: Caller): string {
  return `${caller.kind}:${caller.id}`;
}

/** What a requestState is bound to: the method, the target and the arguments of the request. */
function digest(req: JsonRpcRequest): string {
  const p = req.params ?? {};
  return sha256(canonicalJson([req.method, p.name ?? p.uri ?? null, p.arguments ?? null]));
}

/** Every modern result says what it is and who answered; cacheable ones carry hints. */
function decorate(method: string, result: Result): Result {
  const out: Result = {
    ...result,
    resultType: result.resultType ?? 'complete',
    _meta: { ...result._meta, [META.serverInfo]: SERVER_INFO },
  };
  if (methodSpec(method)?.cacheable && out.resultType === 'complete') {
    // A backend that gave no hint gets the most careful one: stale at once, not shareable.
    if (typeof out.ttlMs !== 'number') out.ttlMs = 0;
    if (out.cacheScope !== 'public' && out.cacheScope !== 'private') out.cacheScope = 'private';
  }
  return out;
}

/** Errors as the modern era numbers them: a missing resource is invalid params there. */
function modernError(body: WireErrorBody): WireErrorBody {
  return body.code === WIRE.RESOURCE_NOT_FOUND ? { ...body, code: WIRE.INVALID_PARAMS } : body;
}
