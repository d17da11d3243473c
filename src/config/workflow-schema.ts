// The `workflows` section: composite tools declared in configuration. Each workflow is checked
// whole when the file loads: its input schema compiles (ajv), every expression parses (CEL), every
// `needs` names a step of the same workflow, steps and nested workflows form no cycle.
import { z } from 'zod';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { compileExpr, compileTemplate, exprProblem, TemplateError } from './workflow-expr.js';
import { timerMs } from './durations.js';
import { WORKFLOWS_SERVER } from './built-in-servers.js';

export const WORKFLOW_NAME = /^[A-Za-z0-9_-]{1,48}$/;
const STEP_ID = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const Expr = z.string().min(1);
const Args = z
  .record(z.string(), z.unknown())
  .optional()
  .describe(
    'Arguments (params for a handler): strings are CEL expressions over input, steps, item and index; arrays and objects are walked; other values stand for themselves.',
  );

/** Whose policy grants a step is judged by (docs/workflows.md#whose-grants). */
export const STEP_GRANTS = ['workflow', 'caller', 'both'] as const;
export type StepGrantsMode = (typeof STEP_GRANTS)[number];
const StepGrants = z.enum(STEP_GRANTS);

/** What a step does: exactly one of these keys. */
export const STEP_KINDS = ['tool', 'resource', 'prompt', 'handler', 'ask', 'workflow'] as const;
export type StepKind = (typeof STEP_KINDS)[number];

export const WorkflowStep = z
  .object({
    id: z
      .string()
      .regex(STEP_ID, 'a step id of letters, digits and _ (CEL-safe)')
      .describe('Names the step: steps.<id> in expressions.'),
    tool: z
      .string()
      .min(1)
      .optional()
      .describe('Calls this tool (the name hosts see, e.g. memory_create_entities).'),
    resource: Expr.optional().describe('Reads this resource: a CEL expression giving the URI.'),
    prompt: z
      .string()
      .min(1)
      .optional()
      .describe('Gets this prompt (the name hosts see); args are its arguments.'),
    handler: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Calls this handler method inside switchboard (vault.sign, context.put, ...); args are its params.',
      ),
    ask: z
      .object({
        message: Expr.describe('CEL expression giving the question shown to the person.'),
        schema: z
          .record(z.string(), z.unknown())
          .optional()
          .describe(
            'requestedSchema of the form; omitted: an approval (accept or decline, nothing to fill in).',
          ),
      })
      .strict()
      .optional()
      .describe('Asks the host (elicitation/create). A decline or cancel fails the step.'),
    workflow: z
      .string()
      .regex(WORKFLOW_NAME)
      .optional()
      .describe('Runs another workflow (as a child run); args are its input.'),
    args: Args,
    needs: z
      .array(z.string())
      .default([])
      .describe(
        'Steps that must end before this one starts; steps that need nothing of each other run in parallel.',
      ),
    if: Expr.optional().describe('CEL condition; false: the step is skipped (steps.<id>.skipped is true).'),
    forEach: Expr.optional().describe(
      'CEL expression giving a list: the step runs once per item (item, index), its result a list.',
    ),
    concurrency: z.number().int().min(1).max(64).default(4).describe('forEach items run at once at most.'),
    timeoutMs: timerMs(1)
      .optional()
      .describe('Per attempt (per item under forEach); the call is cancelled when it passes.'),
    retry: z
      .object({
        attempts: z.number().int().min(1).max(10).default(3).describe('Attempts in all, the first included.'),
        backoffMs: timerMs(0)
          .default(200)
          .describe('Wait before the second attempt, doubled after each one.'),
        force: z
          .boolean()
          .default(false)
          .describe(
            'Retry (and re-run after a restart) even though the target is not read-only or idempotent.',
          ),
      })
      .strict()
      .optional()
      .describe('Retries with backoff; only for read-only or idempotent targets unless force.'),
    onError: z
      .enum(['fail', 'continue'])
      .default('fail')
      .describe(
        'fail: the run fails; continue: the step ends with steps.<id>.error set (and its default as data).',
      ),
    default: z
      .unknown()
      .optional()
      .describe('Fallback data when the step fails (implies onError: continue).'),
    grants: StepGrants.optional().describe(
      "Whose grants this step is judged by, overriding the workflow's grants: workflow, caller or both.",
    ),
  })
  .strict()
  .superRefine((s, ctx) => {
    const kinds = STEP_KINDS.filter((k) => s[k] !== undefined);
    if (kinds.length !== 1)
      ctx.addIssue({
        code: 'custom',
        path: [],
        message: `exactly one of ${STEP_KINDS.join(', ')}${kinds.length ? ` (found ${kinds.join(', ')})` : ''}`,
      });
  });

export const Workflow = z
  .object({
    description: z.string().optional().describe('The tool description hosts see.'),
    input: z
      .record(z.string(), z.unknown())
      .default({ type: 'object' })
      .describe(
        'JSON Schema of the arguments (the tool inputSchema); checked with ajv before any step runs.',
      ),
    steps: z.array(WorkflowStep).min(1).describe('The steps; order does not matter beyond needs.'),
    output: z
      .unknown()
      .optional()
      .describe(
        "The result, as a template over input and steps: an object becomes structuredContent (and its JSON the text), a string the text. Default: each step's data by id.",
      ),
    taskSupport: z
      .enum(['forbidden', 'optional', 'required'])
      .default('optional')
      .describe(
        "Whether hosts may run the workflow as an MCP task (the tool's execution.taskSupport): a 2025-11-25 host by asking (params.task), a 2026-07-28 host that declares the tasks extension after taskAfterMs (at once when required).",
      ),
    taskAfterMs: timerMs(0)
      .default(5000)
      .describe(
        'For a 2026-07-28 host that declares the tasks extension: a run still going after this long is answered as a task (resultType "task"); one that ends sooner answers inline.',
      ),
    grants: StepGrants.default('workflow').describe(
      "Whose grants each step is judged by: workflow (workflow:<name>'s own, behind the caller's grant of the workflow tool), caller (only the grants of the caller the run is for), or both (each step needs both). A step's own grants overrides it.",
    ),
  })
  .strict();
export type WorkflowConfig = z.output<typeof Workflow>;
export type WorkflowStepConfig = z.output<typeof WorkflowStep>;

export const WorkflowsSection = z
  .record(
    z.string().regex(WORKFLOW_NAME, 'a workflow name of letters, digits, _ and - (at most 48)'),
    Workflow,
  )
  .default({})
  .superRefine((all, ctx) => {
    // Cycles are looked for over the whole config (config/schema.ts), which names workflow tools.
    for (const [name, wf] of Object.entries(all)) checkWorkflow(name, wf, all, ctx);
  })
  .describe(
    'Composite tools: each workflow is a tool workflows_<name> whose steps run through the pipeline as caller workflow:<name>.',
  );

const ajv = new Ajv2020({ strict: false, allErrors: true });
(addFormatsModule as unknown as (a: Ajv2020) => void)(ajv);

/** A workflow's input check: the errors in words, or undefined when the arguments fit. */
export function compileInputSchema(schema: Record<string, unknown>): (args: unknown) => string | undefined {
  const validate = ajv.compile(schema);
  return (args) => (validate(args) ? undefined : ajv.errorsText(validate.errors, { dataVar: 'arguments' }));
}

/** One workflow's own checks; `all` says which workflow names exist (nested `workflow:` steps). */
export function checkWorkflow(
  name: string,
  wf: WorkflowConfig,
  all: Record<string, WorkflowConfig>,
  ctx: z.core.$RefinementCtx,
): void {
  const issue = (path: PropertyKey[], message: string) =>
    ctx.addIssue({ code: 'custom', path: [name, ...path], message });
  try {
    ajv.compile(wf.input);
  } catch (err) {
    issue(['input'], `a valid JSON Schema (${(err as Error).message})`);
  }
  const ids = new Map<string, number>();
  wf.steps.forEach((s, i) => {
    if (ids.has(s.id))
      issue(['steps', i, 'id'], `a step id no other step has ("${s.id}" is also steps[${ids.get(s.id)}])`);
    ids.set(s.id, i);
  });
  wf.steps.forEach((s, i) => {
    s.needs.forEach((n, j) => {
      if (!ids.has(n)) issue(['steps', i, 'needs', j], `the id of a step of this workflow ("${n}" is none)`);
    });
    if (s.workflow !== undefined && !Object.hasOwn(all, s.workflow))
      issue(['steps', i, 'workflow'], `the name of a workflow in workflows ("${s.workflow}" is none)`);
    for (const key of ['if', 'forEach', 'resource'] as const) {
      const src = s[key];
      if (src === undefined) continue;
      try {
        compileExpr(src);
      } catch (err) {
        issue(['steps', i, key], `a CEL expression (${exprProblem(err)})`);
      }
    }
    if (s.ask) template(s.ask.message, ['steps', i, 'ask', 'message'], issue);
    if (s.args) template(s.args, ['steps', i, 'args'], issue);
  });
  if (wf.output !== undefined) template(wf.output, ['output'], issue);
  const cycle = stepCycle(wf);
  if (cycle)
    issue(
      ['steps', ids.get(cycle[0]!)!, 'needs'],
      `steps that do not need each other in a cycle (${cycle.join(' -> ')})`,
    );
}

function template(value: unknown, path: PropertyKey[], issue: (p: PropertyKey[], m: string) => void): void {
  try {
    compileTemplate(value);
  } catch (err) {
    if (err instanceof TemplateError) issue([...path, ...err.path], `a CEL expression (${err.message})`);
    else throw err;
  }
}

/** A cycle among steps' needs, as the ids on it, or undefined. */
export function stepCycle(wf: WorkflowConfig): string[] | undefined {
  const needs = new Map(wf.steps.map((s) => [s.id, s.needs]));
  return findCycle(needs);
}

/**
 * Workflows that run each other in a cycle, by `workflow:` steps or `tool:` steps naming a
 * workflow's tool (`workflows<separator><name>`, namespacing.separator). What a script or a name
 * made at run time reaches is stopped at run time instead (workflows/engine.ts).
 */
export function workflowCycle(all: Record<string, WorkflowConfig>, separator: string): string[] | undefined {
  // The name hosts see (catalog/naming.ts exposedName): a workflow name is short enough (48) never
  // to be shortened with its prefix.
  const byTool = new Map(Object.keys(all).map((n) => [`${WORKFLOWS_SERVER}${separator}${n}`, n]));
  const runs = new Map(
    Object.entries(all).map(([n, wf]) => [
      n,
      wf.steps.flatMap((s) => {
        const run = s.workflow ?? (s.tool === undefined ? undefined : byTool.get(s.tool));
        return run === undefined ? [] : [run];
      }),
    ]),
  );
  return findCycle(runs);
}

function findCycle(edges: Map<string, readonly string[]>): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (n: string): string[] | undefined => {
    if (state.get(n) === 'done') return undefined;
    if (state.get(n) === 'open') return [...stack.slice(stack.indexOf(n)), n];
    state.set(n, 'open');
    stack.push(n);
    for (const m of edges.get(n) ?? []) {
      if (!edges.has(m)) continue;
      const found = visit(m);
      if (found) return found;
    }
    stack.pop();
    state.set(n, 'done');
    return undefined;
  };
  for (const n of edges.keys()) {
    const found = visit(n);
    if (found) return found;
  }
  return undefined;
}
