// Code mode's meta-tool, run_script: its definition, the sandbox limits a view's settings give,
// how a tool's result reaches the script, and how the script's outcome is answered to the caller.
import type { CodeModeConfig } from '../config/catalog-schema.js';
import { nestsDeeperThan } from '../encoding/nesting.js';
import { MAX_MESSAGE_DEPTH, type Result } from '../jsonrpc/message.js';
import type { Item } from './catalog.js';
import { ToolCallError, type ScriptLimits, type ScriptOutcome } from './script-sandbox.js';

export const RUN_SCRIPT = 'run_script';
/** How deep a script's return value may nest: the answer's own levels below the message depth. */
const RESULT_DEPTH = MAX_MESSAGE_DEPTH - 8;

export const RUN_SCRIPT_TOOL: Item = {
  name: RUN_SCRIPT,
  title: 'Run a script',
  description: [
    'Runs a short JavaScript script (the body of an async function) in a sandbox and returns what it logs and returns.',
    'Every tool you can list is bound as an async function: `const r = await tools.some_tool({ arg: 1 })` (or `tools["name"]`,',
    "or `await callTool(name, args)`); it resolves to the tool's structuredContent, else its text, and throws an Error",
    '(with .code) when the tool fails or is refused. `console.log` is collected. Use it to chain several tool calls,',
    'filter or join their results, and return only what you need. No filesystem, network, timers or modules.',
  ].join(' '),
  inputSchema: {
    type: 'object',
    properties: {
      script: {
        type: 'string',
        description: 'JavaScript: the body of an async function; `return` a JSON-serialisable value.',
      },
    },
    required: ['script'],
  },
};

/** The largest arguments a script's tool call may have, whatever the message limit (its thread's heap holds them). */
const MAX_CALL_BYTES = 16 * 1024 * 1024;

/** A script's limits from its view's settings; `maxMessageBytes`: the largest message a host may send. */
export function limitsOf(c: CodeModeConfig, maxMessageBytes: number): ScriptLimits {
  return {
    cpuMs: c.cpuMs,
    wallMs: c.wallMs,
    memoryBytes: c.memoryMb * 1024 * 1024,
    stackBytes: c.stackKb * 1024,
    maxCalls: c.maxToolCalls,
    maxOutputBytes: c.maxOutputBytes,
    maxCallBytes: Math.min(maxMessageBytes, MAX_CALL_BYTES),
  };
}

/** The text of a result's text content, joined. */
function textOf(r: Result): string {
  const content = Array.isArray(r.content) ? (r.content as { type?: unknown; text?: unknown }[]) : [];
  return content
    .filter((c) => c.type === 'text' && typeof c.text === 'string')
    .map((c) => c.text as string)
    .join('\n');
}

/**
 * What `await tools.x()` resolves to: the structured content when the tool gives one, else its
 * text, else its content blocks. A tool's error result throws in the script, as a refusal does.
 */
export function valueForScript(r: Result): unknown {
  if (r.isError === true) throw new ToolCallError(textOf(r) || 'the tool reported an error');
  if (r.structuredContent !== undefined) return r.structuredContent;
  const content = Array.isArray(r.content) ? (r.content as { type?: unknown }[]) : [];
  if (content.every((c) => c.type === 'text')) return textOf(r);
  return content;
}

/** The caller's answer: the console and the return value as text, and both as structuredContent. */
export function answerOf(outcome: ScriptOutcome): Result {
  let o = outcome;
  let value: unknown = o.value === undefined ? undefined : JSON.parse(o.value);
  // The answer wraps the value a few levels down; past the message depth no host could read it.
  if (nestsDeeperThan(value, RESULT_DEPTH)) {
    const message = `the script's return value nests deeper than ${RESULT_DEPTH} levels`;
    o = { ...o, ok: false, value: undefined, error: { name: 'LimitError', message } };
    value = undefined;
  }
  const lines = [...o.console];
  if (o.error) {
    const where = o.error.line === undefined ? '' : ` at line ${o.error.line}`;
    lines.push(`${o.error.name}${where}: ${o.error.message}`);
  } else if (o.value !== undefined) lines.push(`result: ${o.value}`);
  return {
    content: [{ type: 'text', text: lines.join('\n') || '(no output)' }],
    structuredContent: {
      ...(value === undefined ? {} : { result: value }),
      console: o.console,
      toolCalls: o.calls,
      ...(o.error ? { error: o.error } : {}),
      ...(o.limit ? { limit: o.limit } : {}),
    },
    ...(o.ok ? {} : { isError: true }),
  };
}
