// The call a request to a mesh server is sent for, carried across the awaits between the route
// stage and the channel that signs it: the channel sees messages, the assertion needs the caller.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { CallContext } from '../call/context.js';
import type { Upstream } from '../backends/upstream.js';

export const currentCall = new AsyncLocalStorage<CallContext>();

/** Makes `upstream.call` run with its call known to the channel beneath it. */
export function carryingCaller<T extends Upstream>(upstream: T): T {
  const call = upstream.call.bind(upstream);
  upstream.call = (ctx, method, params, options) =>
    currentCall.run(ctx, () => call(ctx, method, params, options));
  return upstream;
}
