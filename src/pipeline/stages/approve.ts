// Pauses a call the policy decided `approve` until a human accepts it (see trust/approver.ts).
// After the loop guard, so a call refused anyway never bothers anyone; before route, so nothing
// reaches the target first.
import type { Approver } from '../../trust/approver.js';
import type { Stage } from '../compose.js';
import { callArguments } from '../../call/context.js';
import { subjectOf } from './policy.js';

export function approveStage(approver: Approver, isHandler: (method: string) => boolean): Stage {
  return async function approve(ctx, next) {
    const decision = ctx.decision;
    if (decision?.effect !== 'approve') return next();
    try {
      await approver.approve(ctx, subjectOf(ctx, isHandler), callArguments(ctx), decision.rule);
    } catch (err) {
      ctx.decision = { ...decision, effect: 'deny' };
      throw err;
    }
    return next();
  };
}
