// One step as one call: what method and params a step kind makes from its compiled templates, and
// what a step's answer becomes for the expressions of later steps (steps.<id>.data, .text).
import type { WorkflowStepConfig } from '../config/schema.js';
import { compileExpr, compileTemplate, type Compiled, type Template } from '../config/workflow-expr.js';
import type { Params, Result } from '../jsonrpc/message.js';

/** What later expressions see of a step: its data, its text, the raw result, and how it ended. */
export interface StepOutput {
  data: unknown;
  text?: string | undefined;
  result?: unknown;
  skipped?: boolean | undefined;
  error?: string | undefined;
}

export interface StepRequest {
  method: string;
  params: Params;
  /** A question to the caller (elicitation): it travels the return path, not to a target. */
  returning: boolean;
}

/** A step's expressions, compiled once (config load has checked they compile). */
export interface CompiledStep {
  config: WorkflowStepConfig;
  args: Template | undefined;
  when: Compiled | undefined;
  forEach: Compiled | undefined;
  resource: Compiled | undefined;
  message: Template | undefined;
}

export function compileStep(step: WorkflowStepConfig): CompiledStep {
  return {
    config: step,
    args: step.args ? compileTemplate(step.args) : undefined,
    when: step.if !== undefined ? compileExpr(step.if) : undefined,
    forEach: step.forEach !== undefined ? compileExpr(step.forEach) : undefined,
    resource: step.resource !== undefined ? compileExpr(step.resource) : undefined,
    message: step.ask ? compileTemplate(step.ask.message) : undefined,
  };
}

export function requestOf(
  step: CompiledStep,
  vars: Record<string, unknown>,
  toolName: (workflow: string) => string,
): StepRequest {
  const s = step.config;
  const args = (step.args?.(vars) ?? {}) as Record<string, unknown>;
  if (s.tool !== undefined)
    return { method: 'tools/call', params: { name: s.tool, arguments: args }, returning: false };
  if (s.workflow !== undefined)
    return {
      method: 'tools/call',
      params: { name: toolName(s.workflow), arguments: args },
      returning: false,
    };
  if (s.resource !== undefined)
    return { method: 'resources/read', params: { uri: String(step.resource!(vars)) }, returning: false };
  if (s.prompt !== undefined) {
    // Prompt arguments are strings by definition.
    const strings = Object.fromEntries(
      Object.entries(args).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
    );
    return { method: 'prompts/get', params: { name: s.prompt, arguments: strings }, returning: false };
  }
  if (s.handler !== undefined) return { method: s.handler, params: args, returning: false };
  return {
    method: 'elicitation/create',
    params: {
      mode: 'form',
      message: String(step.message!(vars)),
      requestedSchema: s.ask!.schema ?? { type: 'object', properties: {} },
    },
    returning: true,
  };
}

/** The step's answer as data; a tool's error result or a declined question fails the step. */
export function outputOf(step: WorkflowStepConfig, result: Result): StepOutput {
  if (step.tool !== undefined || step.workflow !== undefined) {
    const text = textOf(result.content);
    if (result.isError === true) throw new Error(text || 'the tool answered with an error');
    const data = result.structuredContent ?? jsonOr(text);
    return { data, text, result };
  }
  if (step.resource !== undefined) {
    const contents = (result.contents as { text?: unknown }[] | undefined) ?? [];
    const text = contents.map((c) => (typeof c.text === 'string' ? c.text : '')).join('\n');
    return { data: jsonOr(text), text, result };
  }
  if (step.prompt !== undefined) {
    const messages = (result.messages as { content?: unknown }[] | undefined) ?? [];
    return { data: result, text: messages.map((m) => textOf([m.content])).join('\n'), result };
  }
  if (step.ask !== undefined) {
    if (result.action !== 'accept')
      throw new Error(`the question was answered with ${String(result.action)}`);
    return { data: result.content ?? {}, result };
  }
  return { data: result, text: JSON.stringify(result), result };
}

function textOf(content: unknown): string {
  if (!Array.isArray(content)) return '';
  return content
    .filter((c): c is { type: string; text: string } => c?.type === 'text' && typeof c.text === 'string')
    .map((c) => c.text)
    .join('\n');
}

/** Text that holds JSON is data (servers often answer JSON as text); other text stays text. */
function jsonOr(text: string): unknown {
  const t = text.trim();
  if (!t.startsWith('{') && !t.startsWith('[')) return text;
  try {
    return JSON.parse(t);
  } catch {
    return text;
  }
}
