// The requestState switchboard hands a modern caller with an input_required result: what it holds,
// whom and what it is bound to, sealed (AEAD) so a tampered, replayed-elsewhere or expired one is
// refused on the retry.
import { WIRE, WireError } from '../errors/errors.js';
import type { JsonRpcRequest } from '../jsonrpc/message.js';
import type { Caller } from '../call/context.js';
import { canonicalSha256 } from '../encoding/canonical-json.js';
import type { Sealer } from './seal.js';

const STATE_PURPOSE = 'requestState';

/** Whom (c), what request (d) and until when (x) a requestState is good for. */
export interface Binding {
  c: string;
  d: string;
  x: number;
}

/**
 * What switchboard's requestState holds: a call paused here (`park`, by id), or a modern
 * backend's own question passed on (`pass`: the backend, the replica that asked, its own state).
 */
export type State =
  ({ k: 'park'; id: string } & Binding) | ({ k: 'pass'; b: string; r?: number; s?: string } & Binding);

/** Binds a state about to be issued for `req` to its caller, valid for `ttlMs` from now. */
export function bindingOf(req: JsonRpcRequest, caller: Caller, ttlMs: number): Binding {
  return { c: principal(caller), d: digest(req), x: Date.now() + ttlMs };
}

export function sealState(sealer: Sealer, state: State): string {
  return sealer.seal(STATE_PURPOSE, state);
}

/** The state a retry presents, if it was issued to this caller for this request and is still good. */
export function openState(sealer: Sealer, req: JsonRpcRequest, caller: Caller): State {
  const state = sealer.open(STATE_PURPOSE, req.params?.requestState) as State | undefined;
  if (!state || state.c !== principal(caller) || state.d !== digest(req) || !(state.x > Date.now())) {
    throw new WireError(WIRE.INVALID_PARAMS, 'Invalid requestState: not issued for this request, or expired');
  }
  return state;
}

/** Who may present a requestState: the caller it was issued to. */
function principal(caller: Caller): string {
  return `${caller.kind}:${caller.id}`;
}

/** What a requestState is bound to: the method, the target and the arguments of the request. */
function digest(req: JsonRpcRequest): string {
  const p = req.params ?? {};
  return canonicalSha256([req.method, p.name ?? p.uri ?? null, p.arguments ?? null]);
}
