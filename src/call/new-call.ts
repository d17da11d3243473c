// The one factory every call context comes from, whatever door it entered by: a host's session
// (stdio or HTTP), a modern stateless request, the bridge, `dispatch()`, a handler's sub-call, a
// backend's question on the way back, and later workflow steps. One shape, one place to add a field.
import { LazyAbort, signalOf } from '../jsonrpc/lazy-abort.js';
import type { Params, RequestId } from '../jsonrpc/message.js';
import { CHAIN_META } from '../protocol/chain-meta.js';
import { newCallId, type Caller, type CallContext, type Reply } from './context.js';

export interface CallInit {
  caller: Caller;
  method: string;
  /** The JSON-RPC id the caller gave the request, when it came off a wire. */
  requestId?: RequestId | undefined;
  params?: Params | undefined;
  /** The caller's way back; a child call uses its parent's. */
  reply?: Reply | undefined;
  /**
   * Aborts the call; a child call is also aborted with its parent. A door's LazyAbort is made into
   * a signal only if something reads `ctx.signal`.
   */
  signal?: AbortSignal | LazyAbort | undefined;
  /** Aborts `signal` without making the door drop its answer (see CallContext.cut). */
  cut?: ((reason: Error) => void) | undefined;
  /**
   * The call this one is made while serving, inside switchboard (a handler's sub-call, a backend's
   * question about its call): it runs under its parent's admission, chain, reply and fate.
   */
  parent?: CallContext | undefined;
  /** The backend (and replica) a modern caller's retry must reach again. */
  resume?: CallContext['resume'];
  /** What a modern request came with besides its body. */
  wire?: CallContext['wire'];
  /** A backend's question on its way back to a caller. */
  returning?: boolean | undefined;
  /** A refusal the door established already (the protocol stage gives it). */
  refusal?: Error | undefined;
  /** The workflow run the call is a step of; a child call's default is its parent's. */
  run?: CallContext['run'];
  /** The entry node of a call that came across the mesh, and its call id there. */
  mesh?: CallContext['mesh'];
}

export function newCall(init: CallInit): CallContext {
  return new Call(init);
}

/**
 * Whether the call has been aborted, without making its signal: a door's call carries a LazyAbort
 * until something reads `signal`, and most calls end before anything does.
 */
export function isAborted(ctx: CallContext): boolean {
  return abortOf(ctx).aborted;
}

/**
 * The call's abort as our own code may listen to it (a request to a backend withdrawn when the
 * call is cancelled) without making a signal: `ctx.signal` is for code that needs a real one.
 */
export function abortOf(ctx: CallContext): AbortSignal | LazyAbort {
  return Call.sourceOf(ctx);
}

/**
 * Puts the call under another abort from now on (a link to its parent's, say), without making a
 * signal of either.
 */
export function setAbort(ctx: CallContext, source: AbortSignal | LazyAbort): void {
  Call.setSource(ctx, source);
}

// A class rather than an object literal: `signal` is an accessor (made on first read), and on the
// prototype it costs nothing per call. Every field is set in one order, whatever the door: one
// object shape for every stage to read.
class Call implements CallContext {
  readonly callId: string;
  readonly caller: Caller;
  readonly method: string;
  readonly requestId: RequestId | undefined;
  params: Params;
  readonly cut: ((reason: Error) => void) | undefined;
  readonly reply: Reply;
  path: readonly string[];
  readonly startedAt: number;
  target: CallContext['target'];
  resume: CallContext['resume'];
  replica: number | undefined;
  result: CallContext['result'];
  parent: CallContext | undefined;
  readonly returning: boolean;
  readonly refusal: Error | undefined;
  readonly wire: CallContext['wire'];
  readonly run: CallContext['run'];
  decision: CallContext['decision'];
  mesh: CallContext['mesh'];
  /** What `signal` reads: a door's abort until something asks, or a signal. Private: a copy of the call (`{ ...ctx }`) does not share it. */
  #source: AbortSignal | LazyAbort;

  constructor(init: CallInit) {
    const { parent } = init;
    let params = init.params ?? {};
    // A sub-call names its parent in _meta as a bridge call would, so the chain stage links them
    // (a question on the way back goes to a caller, who has no use for it).
    if (parent && !init.returning)
      params = {
        ...params,
        _meta: { ...params._meta, [CHAIN_META]: { id: parent.callId, path: [...parent.path] } },
      };
    const reply = init.reply ?? parent?.reply;
    if (!reply) throw new Error(`a call to ${init.method} needs a reply or a parent`);
    this.callId = newCallId();
    this.caller = init.caller;
    this.method = init.method;
    this.requestId = init.requestId;
    this.params = params;
    this.cut = parent ? undefined : init.cut;
    this.reply = reply;
    this.path = parent?.path ?? [];
    this.startedAt = performance.now();
    this.target = undefined;
    this.resume = init.resume;
    this.replica = undefined;
    this.result = undefined;
    this.parent = parent;
    this.returning = init.returning === true;
    this.refusal = init.refusal;
    this.wire = init.wire;
    // A sub-call made for a workflow step (a meta-tool's call, a handler's) is that step's too:
    // it is judged by the run's grants and recorded under its run. A question goes to a caller.
    this.run = init.run ?? (init.returning ? undefined : parent?.run);
    this.decision = undefined;
    this.mesh = init.mesh;
    const own = init.signal;
    // A child call ends with its parent: it shares the parent's abort as it stands now (linked to
    // the parent's own parent, if the chain stage linked it), or links its own signal to it.
    if (parent && own) this.#source = AbortSignal.any([signalOf(own), parent.signal]);
    else if (own) this.#source = own;
    else if (parent) this.#source = #source in parent ? parent.#source : parent.signal;
    else this.#source = new LazyAbort();
  }

  get signal(): AbortSignal {
    return signalOf(this.#source);
  }

  set signal(signal: AbortSignal) {
    this.#source = signal;
  }

  static sourceOf(ctx: CallContext): AbortSignal | LazyAbort {
    return #source in ctx ? ctx.#source : ctx.signal;
  }

  static setSource(ctx: CallContext, source: AbortSignal | LazyAbort): void {
    if (#source in ctx) ctx.#source = source;
    else ctx.signal = signalOf(source);
  }
}
