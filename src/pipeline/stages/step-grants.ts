// Whose grants a workflow step is judged by: the workflow's own (`workflow:<name>`, the default),
// only those of the caller the run is for (`caller`), or both (`both`). The policy stage asks
// this for every call; only a step that names a mode other than `workflow` is judged twice.
import { CALLER_KINDS, type Caller, type CallContext, type Decision } from '../../call/context.js';
import { WIRE, WireError } from '../../errors/errors.js';
import type { Subject } from '../../policy/policy.js';

export interface StepGrants {
  mode: 'caller' | 'both';
  /** The caller the run is for; undefined when its recorded name is not one (denied: fail closed). */
  outer: Caller | undefined;
  /** `host:http`, as recorded. */
  outerKey: string;
  step: string;
  workflow: string;
}

/** The outer caller's judgement a step asks for, or undefined when only the workflow's counts. */
export function stepGrants(ctx: CallContext): StepGrants | undefined {
  const run = ctx.run;
  if (ctx.caller.kind !== 'workflow' || !run || !run.grants || run.grants === 'workflow') return undefined;
  return {
    mode: run.grants,
    outer: callerOf(run.for),
    outerKey: run.for,
    step: run.step ?? '?',
    workflow: ctx.caller.id,
  };
}

/** `kind:id` back to a caller; the id may itself hold colons (`admin:key:ci`). */
function callerOf(key: string): Caller | undefined {
  const i = key.indexOf(':');
  if (i <= 0) return undefined;
  const kind = key.slice(0, i);
  return CALLER_KINDS.has(kind) ? ({ kind, id: key.slice(i + 1) } as Caller) : undefined;
}

/**
 * The refusal of a step whose run's caller lacks a grant of its own. It names the step and the
 * target: the workflow's definition names them already, and an operator chose to require the grant.
 */
export function stepRefused(g: StepGrants, s: Subject): WireError {
  return new WireError(
    WIRE.POLICY_REFUSED,
    `Step ${g.step} of workflow ${g.workflow} runs with grants: ${g.mode}, and ${g.outerKey} is not granted ${s.exposed} itself`,
    { reason: 'policy_denied' },
  );
}

/** Both verdicts allow: the stricter effect, both rules named (the audit record keeps both). */
export function bothDecisions(own: Decision, outer: Decision): Decision {
  return {
    effect: own.effect === 'approve' || outer.effect === 'approve' ? 'approve' : 'allow',
    rule: `${own.rule} + ${outerRule(outer.rule)}`,
    auditValues: own.auditValues === true || outer.auditValues === true,
  };
}

/** How the audit record names a rule that judged the run's caller rather than the workflow. */
export function outerRule(rule: string): string {
  return `runFor:${rule}`;
}
