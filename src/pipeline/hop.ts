// Publishes each request switchboard sends a backend for a call (a hop), so traces can time it and
// stamp it: a subscriber may add `_meta` entries (a `traceparent`) to what the backend receives.
// With nobody subscribed a hop costs one `hasSubscribers` check.
import { channel } from 'node:diagnostics_channel';
import type { CallContext } from '../call/context.js';
import type { Meta, Params, Result } from '../jsonrpc/message.js';

export const hopStart = channel('switchboard:hop:start');
export const hopEnd = channel('switchboard:hop:end');

export interface HopEvent {
  ctx: CallContext;
  /** The backend the request goes to, and how switchboard reaches it. */
  backend: {
    readonly name: string;
    readonly kind: string;
    readonly server?: { readonly protocolVersion: string } | undefined;
  };
  method: string;
  /** The params as the backend will get them, before `meta` is added. */
  params: Params;
  /** Set by a `hop:start` subscriber: `_meta` entries the backend's request carries (they replace its own). */
  meta?: Meta | undefined;
  /** Set before `hop:end`: the backend's answer, or what the request failed with. */
  result?: Result | undefined;
  error?: unknown;
  /** Free for the subscriber that started the hop to find its own state at the end. */
  state?: unknown;
}

/** Sends one request to a backend through `send`, published as a hop when anyone listens. */
export function hop(
  ctx: CallContext,
  backend: HopEvent['backend'],
  params: Params,
  send: (params: Params) => Promise<Result>,
): Promise<Result> {
  if (!hopStart.hasSubscribers) return send(params);
  const event: HopEvent = { ctx, backend, method: ctx.method, params };
  hopStart.publish(event);
  const sent = event.meta ? { ...params, _meta: { ...params._meta, ...event.meta } } : params;
  return send(sent).then(
    (result) => {
      event.result = result;
      hopEnd.publish(event);
      return result;
    },
    (err: unknown) => {
      event.error = err;
      hopEnd.publish(event);
      throw err;
    },
  );
}
