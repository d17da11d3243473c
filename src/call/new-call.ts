// The one factory every call context comes from, whatever door it entered by: a host's session
// (stdio or HTTP), a modern stateless request, the bridge, `dispatch()`, a handler's sub-call, a
// backend's question on the way back, and later workflow steps. One shape, one place to add a field.
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
  /** Aborts the call; a child call is also aborted with its parent. */
  signal?: AbortSignal | undefined;
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
  /** The workflow run the call is a step of. */
  run?: CallContext['run'];
  /** The entry node of a call that came across the mesh, and its call id there. */
  mesh?: CallContext['mesh'];
}

export function newCall(init: CallInit): CallContext {
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
  const signal = init.signal ?? parent?.signal ?? new AbortController().signal;
  // Every field in one order, whatever the door: one object shape for every stage to read.
  return {
    callId: newCallId(),
    caller: init.caller,
    method: init.method,
    requestId: init.requestId,
    params,
    signal: parent && init.signal ? AbortSignal.any([init.signal, parent.signal]) : signal,
    cut: parent ? undefined : init.cut,
    reply,
    path: parent?.path ?? [],
    startedAt: performance.now(),
    target: undefined,
    resume: init.resume,
    replica: undefined,
    result: undefined,
    parent,
    returning: init.returning === true,
    refusal: init.refusal,
    wire: init.wire,
    run: init.run,
    decision: undefined,
    mesh: init.mesh,
  };
}
