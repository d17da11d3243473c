// Pauses a call the policy decided `approve` until a human accepts it (see trust/approver.ts).
// After the loop guard, so a call refused anyway never bothers anyone; before route, so nothing
// reaches the target first.
import type { Approver } from '../../trust/approver.js';
import type { Next, Stage } from '../compose.js';
import { callArguments, type CallContext, type Decision } from '../../call/context.js';
import { subjectOf } from './policy.js';
import type { Subject } from '../../policy/policy.js';

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
    await approver.approve(ctx, asSent(ctx, subjectOf(ctx, isHandler)), callArguments(ctx), decision.rule);
  } catch (err) {
    ctx.decision = { ...decision, effect: 'deny' };
    throw err;
  }
  return next();
}

/**
 * The subject as its target is sent it: a person approves, and an approval is bound to, the very
 * resource read (repo://Owner/x and repo://owner/x are two to a server that tells them apart).
 */
function asSent(ctx: CallContext, subject: Subject): Subject {
  const t = ctx.target;
  if (!t?.sent || !subject.exposed.endsWith(t.name)) return subject;
  return { ...subject, name: t.sent, exposed: subject.exposed.slice(0, -t.name.length) + t.sent };
}
