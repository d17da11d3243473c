// A workflow tool's annotations, derived from its steps: read-only only if every step is,
// destructive or open-world if any step is, idempotent only if every step is. Tool steps take
// their target's annotations from the catalog (MCP's defaults where a hint is absent); the other
// step kinds have fixed hints, written down in docs/workflows.md.
import type { WorkflowConfig, WorkflowStepConfig } from '../config/schema.js';

export interface Hints {
  readOnly: boolean;
  destructive: boolean;
  idempotent: boolean;
  openWorld: boolean;
}

/** The annotations of a tool by its exposed name, as its backend listed them (undefined: unknown). */
export type ToolAnnotations = (exposed: string) => Record<string, unknown> | undefined;

/** MCP's defaults for a tool that says nothing: may write, may destroy, not idempotent, open world. */
const UNKNOWN: Hints = { readOnly: false, destructive: true, idempotent: false, openWorld: true };

/** Reads change nothing and can be repeated; switchboard's own handlers are assumed to write, safely. */
const FIXED: Record<'resource' | 'prompt' | 'handler' | 'ask', Hints> = {
  resource: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  prompt: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  handler: { readOnly: false, destructive: false, idempotent: false, openWorld: false },
  // Asking changes nothing, but asking twice asks a person twice: never repeated on its own.
  ask: { readOnly: true, destructive: false, idempotent: false, openWorld: false },
};

export function toolHints(annotations: Record<string, unknown> | undefined): Hints {
  if (!annotations) return UNKNOWN;
  const readOnly = annotations.readOnlyHint === true;
  return {
    readOnly,
    // Destructive and idempotent mean something only for a tool that writes.
    destructive: !readOnly && annotations.destructiveHint !== false,
    idempotent: readOnly || annotations.idempotentHint === true,
    openWorld: annotations.openWorldHint !== false,
  };
}

export function stepHints(
  step: WorkflowStepConfig,
  tools: ToolAnnotations,
  workflows: Readonly<Record<string, WorkflowConfig>>,
  toolName: (workflow: string) => string,
): Hints {
  if (step.tool !== undefined) return toolHints(tools(step.tool));
  if (step.workflow !== undefined) {
    const inner = workflows[step.workflow];
    return inner ? workflowHints(inner, tools, workflows, toolName) : UNKNOWN;
  }
  if (step.resource !== undefined) return FIXED.resource;
  if (step.prompt !== undefined) return FIXED.prompt;
  if (step.handler !== undefined) return FIXED.handler;
  return FIXED.ask;
}

/** Config refuses cycles between workflows, so the recursion ends. */
export function workflowHints(
  wf: WorkflowConfig,
  tools: ToolAnnotations,
  workflows: Readonly<Record<string, WorkflowConfig>>,
  toolName: (workflow: string) => string,
): Hints {
  const all = wf.steps.map((s) => stepHints(s, tools, workflows, toolName));
  return {
    readOnly: all.every((h) => h.readOnly),
    destructive: all.some((h) => h.destructive),
    idempotent: all.every((h) => h.idempotent),
    openWorld: all.some((h) => h.openWorld),
  };
}

export function asAnnotations(h: Hints): Record<string, boolean> {
  return {
    readOnlyHint: h.readOnly,
    destructiveHint: h.destructive,
    idempotentHint: h.idempotent,
    openWorldHint: h.openWorld,
  };
}
