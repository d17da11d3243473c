// The modern era (2026-07-28) on switchboard's fronts: each request carries its own version,
// capabilities and identity in `_meta` and is served on its own, with no session. Transports
// (stdio, HTTP) hand requests in here; the same pipeline serves them as it serves sessions.
//
// What a backend asks a caller mid-call becomes an `input_required` result:
//   - a legacy backend asks by a request of its own while the call waits: the call is paused
//     here (paused-call.ts), the question goes out as an input request, and the caller's retry (with
//     `inputResponses`) answers the waiting backend and resumes the same call;
//   - a modern backend answers `input_required` itself: it passes through, its requestState
//     wrapped in switchboard's, so the retry reaches the same backend.
// Either way the requestState the caller holds is sealed (AEAD) and bound to the caller, the
// method, the target and the arguments (request-state.ts): a tampered, replayed-elsewhere or
// expired one is refused.
import { muteReply } from '../call/mute-reply.js';
import { randomUUID } from 'node:crypto';
import { WIRE, WireError, toWire } from '../errors/errors.js';
import type { JsonRpcRequest, JsonRpcResponse, Params, Result } from '../jsonrpc/message.js';
import type { Caller, CallContext } from '../call/context.js';
import { newCall } from '../call/new-call.js';
import { modernProblem } from '../protocol/envelope.js';
import { paramsTooDeep } from '../protocol/params-depth.js';
import { META } from '../protocol/versions.js';
import { isInputRequired } from './input-required.js';
import type { ModernExchange } from './modern-exchange.js';
import { decorate, modernError } from './modern-result.js';
import { PausedCall } from './paused-call.js';
import { bindingOf, openState, sealState, type State } from './request-state.js';
import type { Sealer } from './seal.js';

export type { ModernExchange } from './modern-exchange.js';

/** A modern request's answer (HTTP takes its status from the error catalogue). */
export interface ModernAnswer {
  message: JsonRpcResponse;
}

export interface ModernHostOptions {
  /** Runs a call through the pipeline. */
  run(ctx: CallContext): Promise<void>;
  /** A listed tool's input schema by exposed name (a retry's `Mcp-Param-*` headers are checked against it). */
  toolSchema?: ((name: string) => unknown) | undefined;
  sealer: Sealer;
  /** How long a paused call waits for the caller's retry before it is cancelled. */
  inputTimeoutMs: number;
}

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
      view: ex.view,
    });
    const ctx = newCall({
      caller,
      method: req.method,
      requestId: req.id,
      params,
      signal: paused.abort,
      cut: paused.cut,
      reply: paused.reply,
      resume,
      wire: ex.wire,
      mesh: ex.mesh,
    });
    ex.began?.(ctx.callId);
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
    // Only a call that asks for input needs its binding: a finished call (even one refused for
    // arguments with no canonical form) is not encoded again here.
    const bind = () => bindingOf(req, caller, this.options.inputTimeoutMs);
    switch (what) {
      case 'cancelled':
        call.cancel('cancelled by the client');
        return undefined;
      case 'done': {
        const result = call.result();
        const backend = call.ctx.target?.backend;
        if (!isInputRequired(result) || backend === undefined) return result;
        // A modern backend's own question: passed on, its state inside ours.
        const { c, d, x } = bind();
        const state: State = { k: 'pass', b: backend, c, d, x };
        // The retry must reach the replica that asked: the state behind its question is there.
        if (call.ctx.replica !== undefined) state.r = call.ctx.replica;
        if (typeof result.requestState === 'string') state.s = result.requestState;
        return { ...result, requestState: sealState(this.options.sealer, state) };
      }
      case 'input': {
        const id = randomUUID();
        this.paused.set(id, call);
        call.pause(this.options.inputTimeoutMs, () => this.paused.delete(id));
        const state: State = { k: 'park', id, ...bind() };
        return {
          resultType: 'input_required',
          inputRequests: call.questions(),
          requestState: sealState(this.options.sealer, state),
        };
      }
    }
  }

  /**
   * A retry after input_required: resumes the paused call, or retries the modern backend. A retry
   * that resumes a paused call does not pass the pipeline again (its call is under way there), so
   * the era's rules are checked here first, for every retry (one passed on to a modern backend has
   * them checked again by the protocol stage); a refusal is given through the pipeline, so a
   * forged, replayed or expired requestState is audited and observed like any refused call.
   */
  private async resume(req: JsonRpcRequest, caller: Caller, ex: ModernExchange): Promise<Result | undefined> {
    const params = req.params ?? {};
    let state: State;
    let call: PausedCall | undefined;
    try {
      const problem =
        modernProblem(req.method, params, { ...ex.wire, toolSchema: this.options.toolSchema }) ??
        paramsTooDeep(params);
      if (problem) throw problem;
      state = openState(this.options.sealer, req, caller);
      call = state.k === 'park' ? this.paused.get(state.id) : undefined;
      if (state.k === 'park' && !call) {
        throw new WireError(
          WIRE.INVALID_PARAMS,
          'Invalid requestState: the call it belongs to is no longer waiting (it timed out or was cancelled)',
        );
      }
    } catch (refusal) {
      await this.options.run(
        newCall({
          caller,
          method: req.method,
          requestId: req.id,
          params,
          reply: muteReply({ sessionKey: `modern:${caller.kind}:${caller.id}`, era: 'modern' }),
          refusal: refusal as Error,
        }),
      );
      throw refusal; // the protocol stage always rejects; this only satisfies the compiler
    }
    if (state.k === 'pass') {
      const { requestState: _ours, ...rest } = params;
      const forwarded: Params = state.s === undefined ? rest : { ...rest, requestState: state.s };
      return this.call(req, caller, ex, forwarded, { backend: state.b, replica: state.r });
    }
    if (!call) throw new Error('unreachable: a paused call was found above');
    this.paused.delete(state.id);
    call.resume(ex, params._meta?.progressToken);
    call.answer(params.inputResponses);
    return this.outcome(call, req, caller, ex);
  }
}
