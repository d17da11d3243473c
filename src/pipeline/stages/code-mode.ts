// Answers run_script for a caller whose view has code mode on: the script runs in the QuickJS
// sandbox with the caller's visible tools bound, and each tool it calls is a child tools/call of
// the same caller through the whole pipeline (policy, approval, audit linked by parentCallId,
// redaction: the script sees what the caller would), aborted with the outer call or the script.
import type { CallContext } from '../../call/context.js';
import type { Item } from '../../catalog/catalog.js';
import { valueForScript } from '../../catalog/code-mode.js';
import { RUN_SCRIPT, answerOf } from '../../catalog/code-mode.js';
import { META_TOOL_NAMES } from '../../catalog/meta-tools.js';
import { ToolCallError, runScript, type ScriptLimits } from '../../catalog/script-sandbox.js';
import { WIRE, WireError } from '../../errors/errors.js';
import { isMetaCall } from './view.js';
import type { Params, Result } from '../../jsonrpc/message.js';

export type ChildDispatch = (
  parent: CallContext,
  method: string,
  params?: Params,
  signal?: AbortSignal,
) => Promise<Result>;

export async function answerRunScript(
  ctx: CallContext,
  limits: ScriptLimits,
  args: Record<string, unknown>,
  visible: Item[],
  dispatch: ChildDispatch,
): Promise<Result> {
  const script = args.script;
  if (typeof script !== 'string' || script.trim() === '')
    throw new WireError(WIRE.INVALID_PARAMS, 'run_script needs arguments.script, a non-empty string');
  const names = visible.map((t) => String(t.name));
  const call = async (name: string, toolArgs: unknown, signal: AbortSignal): Promise<unknown> => {
    // The meta-tools are no tool of the catalog: a script reaches them as unknown names.
    if (name === RUN_SCRIPT || META_TOOL_NAMES.has(name))
      throw new ToolCallError(`Unknown tool: ${name}`, WIRE.INVALID_PARAMS);
    if (toolArgs !== null && (typeof toolArgs !== 'object' || Array.isArray(toolArgs)))
      throw new ToolCallError('tool arguments must be an object', WIRE.INVALID_PARAMS);
    try {
      const r = await dispatch(ctx, 'tools/call', { name, arguments: toolArgs ?? {} }, signal);
      return valueForScript(r);
    } catch (err) {
      if (err instanceof WireError) throw new ToolCallError(err.message, err.code);
      throw err;
    }
  };
  const outcome = await runScript(script, names, call, limits, ctx.signal, insideScript(ctx));
  return answerOf(outcome);
}

/** Whether the call is made, however deep, for a tool call of a script under way. */
function insideScript(ctx: CallContext): boolean {
  for (let c = ctx.parent; c; c = c.parent) if (c.params.name === RUN_SCRIPT && isMetaCall(c)) return true;
  return false;
}
