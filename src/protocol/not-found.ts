// The error a name that does not exist gets, per method: resolve answers it for unknown names and
// the policy stage for names the caller may not see, so probing cannot tell one from the other.
import { WIRE, WireError } from '../errors/errors.js';
import type { Params } from '../jsonrpc/message.js';
import { methodSpec } from './methods.js';
import { textOf } from '../encoding/text-of.js';

export function notFound(method: string, params: Params): WireError {
  const spec = methodSpec(method);
  switch (spec?.target) {
    case 'tool':
      return new WireError(WIRE.INVALID_PARAMS, `Unknown tool: ${textOf(params.name)}`);
    case 'prompt':
      return new WireError(WIRE.INVALID_PARAMS, `Unknown prompt: ${textOf(params.name)}`);
    case 'resource':
      return resourceNotFound(params.uri);
    case 'completion': {
      const ref = params.ref as { type?: unknown; name?: unknown; uri?: unknown } | undefined;
      if (ref?.type === 'ref/prompt')
        return new WireError(WIRE.INVALID_PARAMS, `Unknown prompt: ${textOf(ref.name)}`);
      return resourceNotFound(ref?.uri);
    }
    case 'task':
      return unknownTask(params.taskId);
    case undefined:
      return new WireError(WIRE.METHOD_NOT_FOUND, `Method not found: ${method}`);
  }
}

export function resourceNotFound(uri: unknown): WireError {
  return new WireError(WIRE.RESOURCE_NOT_FOUND, `Resource not found: ${textOf(uri)}`, { uri });
}

/** What the spec prescribes for a task id the receiver does not know (and for a denied one). */
export function unknownTask(id: unknown): WireError {
  return new WireError(WIRE.INVALID_PARAMS, `Failed to retrieve task: Task not found: ${textOf(id)}`);
}
