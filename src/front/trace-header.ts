// A host's W3C trace context sent as HTTP headers rather than in `_meta`: with tracing on, a legacy
// session's request takes the `traceparent` (and `tracestate`) header into its `_meta` when its
// `_meta` names none, so the call continues the host's trace. (A modern request's headers reach
// its call context as they are.)
import type { IncomingHttpHeaders } from 'node:http';

/** `value` with the header's trace context in its `params._meta`, or `value` itself when there is none to add. */
export function withTraceHeader(value: unknown, headers: IncomingHttpHeaders): unknown {
  const traceparent = headers.traceparent;
  if (typeof traceparent !== 'string' || typeof value !== 'object' || value === null) return value;
  const message = value as { params?: unknown };
  const params = (message.params ?? {}) as Record<string, unknown>;
  if (typeof params !== 'object' || Array.isArray(params)) return value;
  const meta = (params._meta ?? {}) as Record<string, unknown>;
  if (typeof meta !== 'object' || meta === null || meta.traceparent !== undefined) return value;
  const tracestate = typeof headers.tracestate === 'string' ? { tracestate: headers.tracestate } : {};
  return { ...message, params: { ...params, _meta: { ...meta, traceparent, ...tracestate } } };
}
