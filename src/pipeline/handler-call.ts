// What a handler is given of its call: who calls and the call's id, and its signal, dispatch and
// notify, each made only when the handler reaches for it. Most handlers answer at once and read
// none of them; an object literal with two closures and a getter was a share of every such call.
import type { CallContext } from '../call/context.js';
import { linkSignals, type LinkedSignal } from '../call/signals.js';
import { abortOf } from '../call/new-call.js';
import type { HandlerContext } from '../handlers/handler-chain.js';
import type { Params, Result } from '../jsonrpc/message.js';

/** The further calls a handler may make, as its caller. */
export type Dispatcher = { dispatch(parent: CallContext, method: string, params?: Params): Promise<Result> };

export class HandlerCall implements HandlerContext {
  readonly caller: CallContext['caller'];
  readonly callId: string;
  // Private to the language, not only to TypeScript: a handler reaches the call through the
  // members above, never the call context or the pipeline's services themselves.
  readonly #ctx: CallContext;
  readonly #calls: Dispatcher;
  /** The handler's own signal, once it asked: aborted by the caller's, or by the time limit. */
  #link: LinkedSignal | undefined;
  #timedOut = false;

  constructor(ctx: CallContext, calls: Dispatcher) {
    this.caller = ctx.caller;
    this.callId = ctx.callId;
    this.#ctx = ctx;
    this.#calls = calls;
  }

  get signal(): AbortSignal {
    if (!this.#link) {
      this.#link = linkSignals([abortOf(this.#ctx)]);
      if (this.#timedOut) this.#link.abort();
    }
    return this.#link.signal;
  }

  // Getters rather than methods: a handler may take them off the object (`const { dispatch } = api`).
  get dispatch(): HandlerContext['dispatch'] {
    return (method, params) => this.#calls.dispatch(this.#ctx, method, params);
  }

  get notify(): HandlerContext['notify'] {
    return (method, params) => this.#ctx.reply.notify(method, params);
  }

  /** The time limit ran out: the handler's signal is aborted (now, or as soon as it is made). */
  timeOut(): void {
    this.#timedOut = true;
    this.#link?.abort();
  }

  /** The call is over: the handler's signal lets go of the caller's. */
  end(): void {
    this.#link?.unlink();
  }
}
