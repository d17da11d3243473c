// Pauses a call the policy decided `approve` until a human accepts it (see trust/approver.ts).
// After the loop guard, so a call refused anyway never bothers anyone; before route, so nothing
// reaches the target first.
import type { Approver } from '../../trust/approver.js';
import type { Next, Stage } from '../compose.js';
import { callArguments, type CallContext, type Decision } from '../../call/context.js';
import { subjectOf } from './policy.js';

export function approveStage(approver: Approver, isHandler: (method: string) => boolean): Stage {
  // Not async itself: most calls pass straight through, and an async wrapper is a promise per call.
  return function approve(ctx, next) {
    const decision = ctx.decision;
    if (decision?.effect !== 'approve') return next();
    return approveFirst(approver, isHandler, ctx, next, decision);
  };
}

async function approveFirst(
  approver: Approver,
  isHandler: (method: string) => boolean,
  ctx: CallContext,
  next: Next,
  decision: Decision,
): Promise<void> {
  try {
    await approver.approve(ctx, subjectOf(ctx, isHandler), callArguments(ctx), decision.rule);
  } catch (err) {
    ctx.decision = { ...decision, effect: 'deny' };
    throw err;
  }
  return next();
}
