// What a refused call looks like: the same error a name that does not exist gets, so a caller
// cannot tell denied from absent. The policy stage (stages/policy.ts) decides; this answers.
import { WIRE, WireError } from '../../errors.js';
import type { CallContext } from '../context.js';
import { TASK_METHODS, unknownTask } from '../../gateway/tasks.js';

/** The name a grant is checked against: exposed tool/prompt name, resource URI, or the method. */
export function grantSubject(ctx: CallContext): string {
  const p = ctx.params;
  switch (ctx.method) {
    case 'tools/call':
    case 'prompts/get':
      return String(p.name);
    case 'resources/read':
    case 'resources/subscribe':
    case 'resources/unsubscribe':
      return String(p.uri);
    case 'completion/complete': {
      const ref = p.ref as { name?: unknown; uri?: unknown } | undefined;
      return String(ref?.name ?? ref?.uri);
    }
    default:
      // A call on a task is judged by the name the call that created it was made to.
      return TASK_METHODS.has(ctx.method) ? (ctx.target?.subject ?? ctx.method) : ctx.method;
  }
}

/** The error a refused target gets: exactly the one a target that does not exist gets. */
export function denied(ctx: CallContext): WireError {
  switch (ctx.method) {
    case 'tools/call':
      return new WireError(WIRE.INVALID_PARAMS, `Unknown tool: ${String(ctx.params.name)}`);
    case 'prompts/get':
      return new WireError(WIRE.INVALID_PARAMS, `Unknown prompt: ${String(ctx.params.name)}`);
    case 'resources/read':
    case 'resources/subscribe':
    case 'resources/unsubscribe':
      return new WireError(WIRE.RESOURCE_NOT_FOUND, `Resource not found: ${String(ctx.params.uri)}`, {
        uri: ctx.params.uri,
      });
    case 'completion/complete': {
      // Answered as resolve answers a reference it cannot find, so a completion cannot probe either.
      const ref = ctx.params.ref as { type?: unknown; name?: unknown; uri?: unknown } | undefined;
      if (ref?.type === 'ref/prompt')
        return new WireError(WIRE.INVALID_PARAMS, `Unknown prompt: ${String(ref.name)}`);
      return new WireError(WIRE.RESOURCE_NOT_FOUND, `Resource not found: ${String(ref?.uri)}`, {
        uri: ref?.uri,
      });
    }
    default:
      if (TASK_METHODS.has(ctx.method)) return unknownTask(ctx.params.taskId);
      return new WireError(WIRE.METHOD_NOT_FOUND, `Method not found: ${ctx.method}`);
  }
}
