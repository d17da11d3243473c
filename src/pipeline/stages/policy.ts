// Decides, by the declarative policy, what the caller may reach. Lists are answered and filtered
// item by item with the same rules; a target the caller may not see is refused exactly as an
// unknown one, so probing cannot tell "denied" from "absent". A target the caller can see but may
// not call with these arguments is refused as such. A condition that cannot be judged denies.
import type { Catalog } from '../../catalog/catalog.js';
import { methodSpec } from '../../protocol/methods.js';
import { WIRE, WireError } from '../../errors/errors.js';
import type { Result } from '../../jsonrpc/message.js';
import type { Logger } from '../../log.js';
import { PolicyError, type CompiledPolicy, type Subject, type SubjectKind } from '../../policy/policy.js';
import type { Stage } from '../compose.js';
import { judgedArguments, type CallContext, type Caller, type Decision } from '../../call/context.js';
import { bothDecisions, outerRule, stepGrants, stepRefused } from './step-grants.js';
import { denied, grantSubject } from './grant.js';
import { normalUriPattern } from '../../policy/uri-normal.js';
import { barredFromHost } from '../../policy/backend-only.js';

/** The pinning rule (`pinning.onChange`, `pinning.newTools`) under which a use needs approval, if any. */
export type NeedsApproval = (backend: string, name: string, kind: SubjectKind) => string | undefined;

export function policyStage(
  /** The policy in force: a reload that changes servers' bridge.allow compiles a new one. */
  current: () => CompiledPolicy,
  catalog: Catalog,
  isHandler: (method: string) => boolean,
  log: Logger,
  /** Definitions held by pinning that stay usable with approval: the pinning rule that asks. */
  needsApproval: NeedsApproval = () => undefined,
  /** Handlers only backends may call (handler-chain.ts): refused to hosts before any rule. */
  backendOnly: (method: string) => boolean = () => false,
): Stage {
  // Not async itself: only lists are filtered on the way back, and an async wrapper is a promise per call.
  return function policy(ctx, next) {
    const policy = current();
    // On the way back every request is judged as an ask (below), whatever its method names.
    const spec = ctx.returning ? undefined : methodSpec(ctx.method);
    if (spec?.alwaysAllowed) {
      ctx.decision = { effect: 'allow', rule: 'always' };
      return next();
    }
    const list = spec?.list;
    if (list) {
      // A list is answered; what it leaves out is decided item by item.
      ctx.decision = { effect: 'allow', rule: 'policy' };
      return next().then(() => {
        const items = ctx.result?.[list.key];
        if (!Array.isArray(items)) return;
        const kept = items.filter((item: Record<string, unknown>) => {
          // A listed URI is judged as a call to it would be: in normal form.
          const uri = list.subject === 'resource' ? normalUriPattern : (x: string) => x;
          const exposed = uri(String(item[list.field]));
          const owner = catalog.ownerOf(item);
          const s: Subject = {
            kind: list.subject,
            backend: owner?.backend,
            name: owner ? uri(owner.name) : exposed,
            exposed,
            method: list.judgedAs,
          };
          return policy.decideListing(ctx.caller, s).effect !== 'deny';
        });
        if (kept.length !== items.length) ctx.result = { ...(ctx.result as Result), [list.key]: kept };
      });
    }
    const s = subjectOf(ctx, isHandler, catalog);
    const args = ctx.target?.kind === 'task' ? undefined : judgedArguments(ctx);
    const decision = decideStep(ctx, s, policy, log, args, backendOnly);
    // A follow-up on a task was settled when the call that made it was approved or not.
    const held =
      decision.effect === 'allow' && s.backend && ctx.target?.kind !== 'task'
        ? needsApproval(s.backend, s.name, s.kind)
        : undefined;
    if (held) ctx.decision = { ...decision, effect: 'approve', rule: held };
    return next();
  };
}

/**
 * The verdict on a call, recorded on it: by its caller's grants, and for a workflow step that asks
 * (grants: caller or both) by those of the caller its run is for as well, or instead. Throws the
 * refusal. The policy stage and the meta-tools (a step that is run_script or call_tool) both ask it.
 */
export function decideStep(
  ctx: CallContext,
  s: Subject,
  policy: CompiledPolicy,
  log: Logger,
  args: unknown,
  backendOnly: (method: string) => boolean = () => false,
): Decision {
  const step = stepGrants(ctx);
  let decision: Decision | undefined;
  if (step?.mode !== 'caller') decision = decideCall(ctx, s, policy, log, args, backendOnly);
  if (step) {
    const task = ctx.target?.kind === 'task';
    const outer = judgeRunFor(policy, step.outer, s, args, decision, { task, backendOnly, log });
    if (outer.refused) {
      ctx.decision = outer.decision;
      throw stepRefused(step, s);
    }
    decision = outer.decision;
  }
  ctx.decision = decision!;
  return decision!;
}

/** How a verdict is reached besides caller, subject and arguments. */
export interface JudgeOptions {
  /** A follow-up on a task: judged as the listing of the tool that made it. */
  task: boolean;
  backendOnly: (method: string) => boolean;
  log: Logger;
}

/**
 * A workflow step's verdict by the grants of the caller its run is for (`outer`; undefined when
 * its recorded name is none: denied), combined with the workflow's own verdict `own` when the step
 * runs with `both`. `refused`: the step is refused for the run's caller. Also what
 * `switchboard policy test` reports for each step of a workflow.
 */
export function judgeRunFor(
  policy: CompiledPolicy,
  outer: Caller | undefined,
  s: Subject,
  args: unknown,
  own: Decision | undefined,
  o: JudgeOptions,
): { decision: Decision; refused: boolean } {
  const verdict = outer
    ? judge(policy, outer, s, args, o)
    : { decision: { effect: 'deny', rule: 'run.for' } as Decision, refused: {} };
  const named = { ...verdict.decision, rule: outerRule(verdict.decision.rule) };
  if (verdict.refused) return { decision: named, refused: true };
  return { decision: own ? bothDecisions(own, verdict.decision) : named, refused: false };
}

/**
 * One caller's verdict on the call, and how a denial is to be answered: as absent, or with why.
 * Exported for `switchboard policy test`, which explains a workflow's steps by it.
 */
export function judge(
  policy: CompiledPolicy,
  caller: Caller,
  s: Subject,
  args: unknown,
  { task, backendOnly, log }: JudgeOptions,
): { decision: Decision; refused?: { why?: string } } {
  const barred = barredFromHost(caller, s, backendOnly);
  // As absent as a handler nobody registered, whatever rule would have allowed it.
  if (barred) return { decision: { effect: 'deny', rule: barred.rule }, refused: {} };
  if (task) {
    // The call that made the task was judged with its arguments, and only its caller reaches
    // the task: what it may still do is follow up on a tool it can see.
    const v = policy.decideListing(caller, s);
    const effect = v.effect === 'deny' ? 'deny' : 'allow';
    return { decision: { effect, rule: v.rule }, refused: effect === 'deny' ? {} : undefined };
  }
  try {
    const v = policy.decide(caller, s, args);
    const decision: Decision = { effect: v.effect, rule: v.rule, auditValues: v.auditValues };
    return v.effect === 'deny'
      ? { decision, refused: { why: 'refused by policy for these arguments' } }
      : { decision };
  } catch (err) {
    if (!(err instanceof PolicyError)) throw err;
    // Fail closed: a rule that cannot judge the call denies it, and says so in the log.
    log.warn(
      { rule: err.rule, caller, target: s.exposed, err: err.message },
      'policy rule could not be evaluated; call denied',
    );
    return {
      decision: { effect: 'deny', rule: err.rule },
      refused: { why: 'the policy could not judge its arguments' },
    };
  }
}

/**
 * Decides a call on `s` by the caller's own grants and records the decision on the call; throws
 * the refusal a denied call gets.
 */
function decideCall(
  ctx: CallContext,
  s: Subject,
  policy: CompiledPolicy,
  log: Logger,
  args: unknown,
  backendOnly: (method: string) => boolean,
): Decision {
  const own = judge(policy, ctx.caller, s, args, { task: ctx.target?.kind === 'task', backendOnly, log });
  ctx.decision = own.decision;
  if (own.refused) throw own.refused.why ? refusal(ctx, s, policy, own.refused.why) : denied(ctx);
  return own.decision;
}

/** Unknown for a target the caller cannot see; an honest refusal for one it can. */
function refusal(ctx: CallContext, s: Subject, policy: CompiledPolicy, why: string): WireError {
  if (s.kind === 'ask')
    return new WireError(WIRE.POLICY_REFUSED, `${s.method} from ${s.backend} refused by policy`, {
      reason: 'policy_denied',
    });
  if (!policy.visible(ctx.caller, s)) return denied(ctx);
  return new WireError(WIRE.POLICY_REFUSED, `Call to ${s.exposed} ${why}`, { reason: 'policy_denied' });
}

/** What the call is about, once resolve has found its owner. */
export function subjectOf(
  ctx: CallContext,
  isHandler: (method: string) => boolean,
  catalog?: Catalog,
): Subject {
  const t = ctx.target;
  if (ctx.returning) {
    // A backend's question is judged with the backend as caller and owner.
    const backend = ctx.caller.kind === 'backend' ? ctx.caller.id : undefined;
    return { kind: 'ask', backend, name: ctx.method, exposed: ctx.method, method: ctx.method };
  }
  const exposed = grantSubject(ctx);
  if (t) {
    if (t.kind === 'task') {
      // A task is judged as the tool call that created it (its subject is that exposed name).
      const own = catalog?.resolve('tools', exposed)?.name ?? exposed;
      return { kind: 'tool', backend: t.backend, name: own, exposed, method: 'tools/call' };
    }
    let kind: SubjectKind;
    if (t.kind === 'completion') {
      const ref = ctx.params.ref as { type?: unknown } | undefined;
      kind = ref?.type === 'ref/prompt' ? 'prompt' : 'resource';
    } else kind = t.kind;
    return { kind, backend: t.backend, name: t.name, exposed, method: ctx.method };
  }
  return {
    kind: isHandler(ctx.method) ? 'handler' : 'method',
    name: ctx.method,
    exposed,
    method: ctx.method,
  };
}
