// How a call ended, in the few words metrics, the recent-calls ring and the dashboard share: ok, a
// tool's own error result, a refusal (and by whom: policy, admission, approval), or another error.
import type { CallContext } from '../call/context.js';
import { LocalError, WIRE, WireError } from '../errors/errors.js';

export type Outcome = 'ok' | 'tool_error' | 'refused' | 'error';
export type RefusalReason = 'policy' | 'admission' | 'approval';

export interface CallOutcome {
  outcome: Outcome;
  refusal?: RefusalReason | undefined;
  /** The JSON-RPC code of the error, when the call ended in one. */
  code?: number | undefined;
}

const ADMISSION_CODES = new Set<number>([WIRE.RATE_LIMITED, WIRE.QUEUE_FULL, WIRE.DRAINING]);
const ADMISSION_LOCAL = new Set(['rate_limited', 'queue_full', 'draining']);

export function outcomeOf(ctx: CallContext, error: unknown): CallOutcome {
  if (error === undefined) return { outcome: ctx.result?.isError === true ? 'tool_error' : 'ok' };
  const refusal = refusalOf(ctx, error);
  const code = error instanceof WireError ? error.code : undefined;
  return refusal ? { outcome: 'refused', refusal, code } : { outcome: 'error', code };
}

function refusalOf(ctx: CallContext, error: unknown): RefusalReason | undefined {
  if (error instanceof LocalError) return ADMISSION_LOCAL.has(error.code) ? 'admission' : undefined;
  if (!(error instanceof WireError)) return undefined;
  if (ADMISSION_CODES.has(error.code)) return 'admission';
  const reason = (error.data as { reason?: unknown } | undefined)?.reason;
  if (typeof reason === 'string' && reason.startsWith('approval_')) return 'approval';
  // A denial reads as an unknown name to the caller; the decision the policy stage left says it was one.
  if (reason === 'policy_denied' || ctx.decision?.effect === 'deny') return 'policy';
  return undefined;
}
