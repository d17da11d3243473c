// The `policy` section of the configuration: ordered rules over caller × target × arguments, the
// defaults when no rule matches, and how human approval is asked for. The same rule shape is what
// a separate policy file (`policy.file`) holds under `rules`.
import { z } from 'zod';
import { linearPatternProblem } from '../encoding/linear-pattern.js';
import { timerMs } from './durations.js';

export const Effect = z.enum(['allow', 'deny', 'approve']);
export type Effect = z.output<typeof Effect>;

const CALLER_KINDS = ['host', 'backend', 'workflow', 'extension', 'admin', 'agent'] as const;

const Patterns = (what: string) =>
  z
    .array(z.string().min(1))
    .min(1, 'at least one pattern (leave the key out to match any)')
    .optional()
    .describe(`${what} (* matches any run of characters). Omitted: any.`);

const CallerPattern = z
  .string()
  .min(1)
  .refine((p) => p === '*' || CALLER_KINDS.some((k) => p.startsWith(`${k}:`) || p === `${k}*`), {
    message: `a pattern over "<kind>:<id>" with kind ${CALLER_KINDS.join(', ')} (e.g. host:*, backend:search), or *`,
  });

export const Condition = z
  .object({
    equals: z.unknown().optional().describe('The value equals this JSON value (deep comparison).'),
    in: z.array(z.unknown()).min(1).optional().describe('The value equals one of these JSON values.'),
    prefix: z.string().optional().describe('The value is a string starting with this text (literal).'),
    pathPrefix: z
      .string()
      .startsWith('/')
      .optional()
      .describe(
        'The value is a path that, once normalised (. and .. resolved, repeated / collapsed), is this directory or inside it.',
      ),
    matches: z
      .string()
      .superRefine((source, ctx) => {
        const problem = linearPatternProblem(source);
        if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
      })
      .optional()
      .describe(
        'The value is a string matching this regular expression (RE2 syntax, run in time linear in the value: no lookaround or backreferences; anchor it with ^…$ to match whole).',
      ),
    exists: z.boolean().optional().describe('true: the argument is present; false: it is absent.'),
  })
  .strict()
  .refine((c) => Object.values(c).some((v) => v !== undefined) || 'equals' in c, {
    message: 'at least one of equals, in, prefix, pathPrefix, matches, exists',
  });
export type Condition = z.output<typeof Condition>;

export const Rule = z
  .object({
    name: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Shown in audit records, logs and `switchboard policy test` (default: rule[N], its position).',
      ),
    callers: z
      .array(CallerPattern)
      .min(1, 'at least one pattern (leave the key out to match any caller)')
      .optional()
      .describe(
        'Patterns over "<kind>:<id>": host:stdio, host:http, backend:<server name>, workflow:<name>, extension:<name>. Omitted: any caller.',
      ),
    backends: Patterns('The server that owns the target, by its name in servers (handlers have none)'),
    tools: Patterns('Tool names as the owning server names them (not the prefixed names hosts see)'),
    prompts: Patterns('Prompt names as the owning server names them'),
    resources: Patterns(
      "Resource URIs (and URI templates, when listing) as the owning server names them, without switchboard's prefix",
    ),
    handlers: Patterns('Handler methods served inside switchboard, e.g. vault.*'),
    methods: Patterns(
      'MCP methods the call uses (tools/call, resources/subscribe, completion/complete, ...); listing counts as the call it lists for',
    ),
    when: z
      .record(z.string().min(1), Condition)
      .optional()
      .describe(
        'Conditions on the arguments, all of which must hold: keys are dotted paths into tool or prompt arguments (path, options.mode), `uri` for resources, the params for handlers. A rule with conditions cannot be decided when listing: the item is listed and decided at the call.',
      ),
    effect: Effect.describe('allow, deny, or approve (ask a human, then go on only if they accept).'),
    auditValues: z
      .boolean()
      .optional()
      .describe(
        'Store the canonical arguments in the audit record of calls this rule decides (audit.values for one rule).',
      ),
  })
  .strict()
  .refine(
    (r) => !(r.handlers && r.backends),
    'handlers have no owning server: a rule naming both handlers and backends could never match a handler',
  );
export type Rule = z.output<typeof Rule>;

export const PolicyFile = z
  .object({ rules: z.array(Rule).default([]).describe('Rules, in order; they come after the inline ones.') })
  .strict();

export const Policy = z
  .object({
    file: z
      .string()
      .min(1)
      .optional()
      .describe(
        'A YAML or JSON file of more rules ({rules: [...]}), relative to the config file; its rules are evaluated after the inline ones.',
      ),
    rules: z
      .array(Rule)
      .default([])
      .describe('Rules in order: the first one whose callers, target and conditions all match decides.'),
    defaults: z
      .object({
        host: Effect.default('allow').describe(
          'Hosts, when no rule matches (handler methods stay denied to hosts unless a rule allows them).',
        ),
        backend: Effect.default('deny').describe(
          'Backends calling over the bridge, when neither a rule nor their bridge.allow matches.',
        ),
        workflow: Effect.default('allow').describe('Workflows, when no rule matches.'),
        agent: Effect.default('allow').describe(
          'A2A agents calling switchboard as an agent (a2a.serve), when no rule matches (handler methods stay denied to them unless a rule allows them).',
        ),
      })
      .strict()
      .prefault({})
      .describe(
        'What decides a call no rule matches, by kind of caller (extensions inside switchboard: allow).',
      ),
    approval: z
      .object({
        timeoutMs: timerMs(1000)
          .default(300_000)
          .describe('How long a call waits for a human to approve it before it fails as expired.'),
        operator: z
          .boolean()
          .default(true)
          .describe(
            'When the host cannot be asked (no elicitation, or a bridge call), ask an operator through `switchboard approvals` (kept in the audit database); false: such calls are refused.',
          ),
        pollMs: z
          .number()
          .int()
          .min(50)
          .max(10_000)
          .default(250)
          .describe("How often a waiting call checks the database for an operator's verdict."),
      })
      .strict()
      .prefault({})
      .describe('Human approval of calls a rule with effect: approve decides.'),
  })
  .strict()
  .superRefine((p, ctx) => {
    const seen = new Map<string, number>();
    p.rules.forEach((r, i) => {
      if (r.name === undefined) return;
      const first = seen.get(r.name);
      if (first !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['rules', i, 'name'],
          message: `a name no other rule has ("${r.name}" is also rules[${first}])`,
        });
      else seen.set(r.name, i);
    });
  })
  .prefault({})
  .describe('Who may list and call what: ordered rules, then defaults. See docs/policy.md.');
export type Policy = z.output<typeof Policy>;
