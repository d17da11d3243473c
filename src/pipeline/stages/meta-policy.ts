// Policy over the meta-tools themselves: a call to search_tools, describe_tools, call_tool or
// run_script is judged, audited and, when a rule says so, approved as a call to a tool of the
// server `switchboard` (policy/meta-tools.ts), a workflow step's by its run's grants as well, and a
// meta-tool the caller may not call is not listed. The calls a meta-tool makes are judged again,
// each as the caller's own.
import type { Caller, CallContext } from '../../call/context.js';
import type { Logger } from '../../log.js';
import { metaToolSubject } from '../../policy/meta-tools.js';
import type { CompiledPolicy } from '../../policy/policy.js';
import type { Approver } from '../../trust/approver.js';
import { decideStep } from './policy.js';

export interface MetaPolicy {
  /** The policy in force (a reload may compile a new one). */
  policy: () => CompiledPolicy;
  /** Asks a person about a meta-tool call a rule sends to approval. */
  approver: Approver;
  log: Logger;
}

/** Whether the caller's tools/list shows the meta-tool `name` (a conditional rule lists it). */
export function metaListed(p: MetaPolicy, caller: Caller, name: string): boolean {
  return p.policy().visible(caller, metaToolSubject(name));
}

/**
 * Judges a call to the meta-tool `name` with its arguments: records the decision on the call (the
 * audit stage writes it), throws the normal refusal when denied (an unknown tool, or -32040 when
 * the caller can see it but these arguments are refused), and waits for approval when asked to.
 */
export async function judgeMeta(p: MetaPolicy, ctx: CallContext, name: string, args: unknown): Promise<void> {
  const subject = metaToolSubject(name);
  // A workflow step that is a meta-tool is judged as any step: by the run's grants too.
  const decision = decideStep(ctx, subject, p.policy(), p.log, args);
  if (decision.effect !== 'approve') return;
  try {
    await p.approver.approve(ctx, subject, args, decision.rule);
  } catch (err) {
    ctx.decision = { ...decision, effect: 'deny' };
    throw err;
  }
}
