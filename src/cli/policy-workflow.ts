// What `switchboard policy test` adds when the tool tested is a workflow: the grants its steps run
// with (workflow, caller or both) and each step's verdict for the given caller, decided by the
// policy stage's own functions (judge, judgeRunFor), so an operator sees before a run which step
// would be refused and by which rule.
import type { Caller } from '../call/context.js';
import type { Config } from '../config/schema.js';
import type { StepGrantsMode } from '../config/workflow-schema.js';
import { backendOnlyHandlers } from '../extensions/index.js';
import { silentLogger } from '../log.js';
import { judge, judgeRunFor, type JudgeOptions } from '../pipeline/stages/policy.js';
import type { CompiledPolicy, Subject } from '../policy/policy.js';
import { argumentsOf } from '../protocol/methods.js';
import { compileStep, requestOf, type StepRequest } from '../workflows/step-call.js';
import { workflowToolName } from './policy-builtins.js';

/** A target as the command's flags name it, worked out as for the command's own target. */
export type Resolve = (f: {
  tool?: string;
  prompt?: string;
  resource?: string;
  method?: string;
}) => Subject | string;

export interface StepVerdict {
  step: string;
  grants: StepGrantsMode;
  /** `tool notes_write_note`, as the step names it. */
  target: string;
  /** `decided at run time`: a rule with conditions over arguments only the run will know. */
  effect: 'allow' | 'deny' | 'approve' | 'decided at run time';
  rule: string;
  /** Whose grants lack it: the workflow's own, or the caller's the run is for. */
  refusedBy?: 'workflow' | 'caller' | undefined;
  /** Why the step cannot be judged from the config (its target is known only at run time). */
  note?: string | undefined;
  /** A refusal ends the step with an error and the run goes on (onError: continue, or a default). */
  continues?: boolean | undefined;
}

export interface WorkflowExplanation {
  workflow: string;
  grants: StepGrantsMode;
  steps: StepVerdict[];
}

const OPTIONS: JudgeOptions = {
  task: false,
  backendOnly: (m) => backendOnlyHandlers.includes(m),
  log: silentLogger,
};

/**
 * Each step of workflow `name` as the policy stage would judge it in a run `caller` starts with
 * `input`. A step's arguments are worked out from its templates where they need nothing but the
 * input; where they need more, a rule with conditions leaves the step to be decided at run time.
 */
export function explainWorkflow(
  config: Config,
  policy: CompiledPolicy,
  caller: Caller,
  name: string,
  input: unknown,
  resolve: Resolve,
): WorkflowExplanation {
  const wf = config.workflows[name]!;
  const steps = wf.steps.map((step): StepVerdict => {
    const grants = step.grants ?? wf.grants;
    const continues = step.onError === 'continue' || step.default !== undefined;
    const base = { step: step.id, grants, target: describe(step), ...(continues ? { continues } : {}) };
    const request = requestFor(config, step, input);
    const subject = request && subjectOf(request.req, resolve);
    if (!request || !subject || typeof subject === 'string')
      return {
        ...base,
        effect: 'decided at run time',
        rule: '-',
        note: typeof subject === 'string' ? subject : 'its target is an expression known only at run time',
      };
    const args = request.known
      ? argumentsOf(request.req.method, request.req.params, subject.name)
      : undefined;
    const own: Caller = { kind: 'workflow', id: name };
    const judged = grants === 'workflow' ? [own] : grants === 'caller' ? [caller] : [own, caller];
    if (!request.known) {
      const conditional = judged
        .map((c) => policy.decideListing(c, subject))
        .find((v) => v.effect === 'call');
      if (conditional) return { ...base, effect: 'decided at run time', rule: conditional.rule };
    }
    // The policy stage's order: the workflow's own grants (unless `caller`), then the run's caller's.
    let ownDecision;
    if (grants !== 'caller') {
      const v = judge(policy, own, subject, args, OPTIONS);
      if (v.refused) return { ...base, effect: 'deny', rule: v.decision.rule, refusedBy: 'workflow' };
      ownDecision = v.decision;
      if (grants === 'workflow') return { ...base, effect: v.decision.effect, rule: v.decision.rule };
    }
    const r = judgeRunFor(policy, caller, subject, args, ownDecision, OPTIONS);
    return {
      ...base,
      effect: r.decision.effect,
      rule: r.decision.rule,
      ...(r.refused ? { refusedBy: 'caller' as const } : {}),
    };
  });
  return { workflow: name, grants: wf.grants, steps };
}

type Step = Config['workflows'][string]['steps'][number];

/** The step's call, with its arguments when its templates need only the input. */
function requestFor(
  config: Config,
  step: Step,
  input: unknown,
): { req: StepRequest; known: boolean } | undefined {
  const compiled = compileStep(step);
  const toolName = (w: string) => workflowToolName(config, w);
  const vars = { input: input ?? {}, steps: {}, run: { id: 'policy-test', workflow: '' } };
  try {
    if (step.forEach === undefined) return { req: requestOf(compiled, vars, toolName), known: true };
  } catch {
    // An expression over what only the run will have (earlier steps, item): arguments unknown.
  }
  try {
    return { req: requestOf({ ...compiled, args: undefined }, vars, toolName), known: false };
  } catch {
    return undefined;
  }
}

function subjectOf(req: StepRequest, resolve: Resolve): Subject | string | undefined {
  const p = req.params;
  if (req.returning) return { kind: 'ask', name: req.method, exposed: req.method, method: req.method };
  if (req.method === 'tools/call') return resolve({ tool: String(p.name) });
  if (req.method === 'prompts/get') return resolve({ prompt: String(p.name) });
  if (req.method === 'resources/read') return resolve({ resource: String(p.uri) });
  return resolve({ method: req.method });
}

function describe(step: Step): string {
  if (step.tool !== undefined) return `tool ${step.tool}`;
  if (step.workflow !== undefined) return `workflow ${step.workflow}`;
  if (step.prompt !== undefined) return `prompt ${step.prompt}`;
  if (step.handler !== undefined) return `handler ${step.handler}`;
  if (step.resource !== undefined) return `resource ${step.resource}`;
  return 'ask (elicitation/create)';
}

/** The explanation as lines of text, the refused steps named with the rule and whose grant lacks. */
export function workflowLines(e: WorkflowExplanation, caller: Caller): string[] {
  const who = `${caller.kind}:${caller.id}`;
  const lines = [`workflow ${e.workflow} runs its steps with grants: ${e.grants}`];
  for (const s of e.steps) {
    const mode = s.grants === e.grants ? '' : ` (grants: ${s.grants})`;
    let line = `  step ${s.step}${mode}: ${s.target}: ${s.effect}`;
    if (s.rule !== '-') line += ` (rule ${s.rule})`;
    const outcome = s.continues
      ? 'the step would end with an error and the run go on (onError: continue)'
      : 'a run would fail at this step';
    if (s.refusedBy === 'caller') line += `: ${who} is not granted it itself; ${outcome}`;
    if (s.refusedBy === 'workflow') line += `: workflow:${e.workflow} is not granted it; ${outcome}`;
    if (s.note) line += `: ${s.note}`;
    lines.push(line);
  }
  return lines;
}
