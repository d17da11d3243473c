// What a span says about a call or a backend request, after the OpenTelemetry semantic conventions
// for MCP (gen-ai/mcp.md): names and kinds of things, never argument values, and a session only as
// switchboard's digest of it (a session id works as a credential).
import type { Attributes } from '@opentelemetry/api';
import type { CallContext } from '../call/context.js';
import type { Result } from '../jsonrpc/message.js';
import { toWire } from '../errors/errors.js';
import { META } from '../protocol/versions.js';
import { sessionDigest } from '../trust/audit-writer.js';
import type { HopEvent } from '../pipeline/hop.js';

/** `{mcp.method.name} {target}`, the target a tool's or prompt's name where the call has one. */
export function spanName(method: string, target: string | undefined): string {
  return target === undefined ? method : `${method} ${target}`;
}

/** The name a tool or prompt call names (the exposed one, as the caller sent it). */
export function calledTarget(ctx: CallContext): string | undefined {
  if (ctx.method !== 'tools/call' && ctx.method !== 'prompts/get') return undefined;
  const name = ctx.params.name;
  return typeof name === 'string' ? name : undefined;
}

export function callAttributes(ctx: CallContext): Attributes {
  const a: Attributes = {
    'mcp.method.name': ctx.method,
    'switchboard.call.id': ctx.callId,
    'switchboard.caller': `${ctx.caller.kind}:${ctx.caller.id}`,
  };
  // A request id is a string or a number; anything else a door let through is left out.
  if (typeof ctx.requestId === 'string' || typeof ctx.requestId === 'number')
    a['jsonrpc.request.id'] = String(ctx.requestId);
  addTarget(a, ctx.method, calledTarget(ctx), ctx.params.uri);
  const version = ctx.params._meta?.[META.protocolVersion];
  if (typeof version === 'string') a['mcp.protocol.version'] = version;
  // Only a legacy session is a session in the spec's sense; its digest, never its id.
  if (ctx.reply.era === 'legacy' && ctx.reply.session)
    a['mcp.session.id'] = sessionDigest(ctx.reply.sessionKey);
  const transport = callerTransport(ctx);
  if (transport) a['network.transport'] = transport;
  return a;
}

/** What is known only once the call ran: where it went and what decided it. */
export function callOutcomeAttributes(ctx: CallContext): Attributes {
  const a: Attributes = {};
  if (ctx.target) a['switchboard.backend'] = ctx.target.backend;
  if (ctx.decision) {
    a['switchboard.decision'] = ctx.decision.effect;
    a['switchboard.rule'] = ctx.decision.rule;
  }
  return a;
}

export function hopAttributes(event: HopEvent): Attributes {
  const { ctx, backend } = event;
  const own = ctx.target?.kind === 'tool' || ctx.target?.kind === 'prompt' ? ctx.target.name : undefined;
  const a: Attributes = {
    'mcp.method.name': event.method,
    'switchboard.backend': backend.name,
    'network.transport': backend.kind === 'stdio' ? 'pipe' : 'tcp',
  };
  addTarget(a, event.method, own, ctx.target?.kind === 'resource' ? ctx.target.name : undefined);
  if (backend.server) a['mcp.protocol.version'] = backend.server.protocolVersion;
  return a;
}

/** The backend's own name of the tool or prompt a hop calls. */
export function hopTarget(event: HopEvent): string | undefined {
  const t = event.ctx.target;
  return t?.kind === 'tool' || t?.kind === 'prompt' ? t.name : undefined;
}

/**
 * `error.type` and the span's status message: the JSON-RPC error code (as a string) when the call
 * failed, `tool_error` for a tool result marked isError; undefined when it went well.
 */
export function failure(
  error: unknown,
  result: Result | undefined,
): { type: string; message: string } | undefined {
  if (error !== undefined) {
    const wire = toWire(error);
    return { type: String(wire.code), message: wire.message };
  }
  if (result?.isError === true) return { type: 'tool_error', message: 'tool_error' };
  return undefined;
}

/** Written into `a` (one attributes object per span: the SDK copies it anyway). */
function addTarget(a: Attributes, method: string, name: string | undefined, uri: unknown): void {
  if (method === 'tools/call' && name !== undefined) {
    a['gen_ai.tool.name'] = name;
    a['gen_ai.operation.name'] = 'execute_tool';
  } else if (method === 'prompts/get' && name !== undefined) a['gen_ai.prompt.name'] = name;
  else if (typeof uri === 'string' && method.startsWith('resources/')) a['mcp.resource.uri'] = uri;
}

/** How the call reached switchboard: stdio is a pipe, the bridge a Unix socket, HTTP TCP. */
function callerTransport(ctx: CallContext): string | undefined {
  if (ctx.parent || ctx.returning) return undefined;
  if (ctx.caller.kind === 'backend') return 'unix';
  if (ctx.caller.kind === 'host') return ctx.caller.id === 'stdio' ? 'pipe' : 'tcp';
  return undefined;
}
