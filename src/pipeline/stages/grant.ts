// What a non-host caller may reach: until declarative policy lands, a backend reaches over the
// bridge only what its `bridge.allow` patterns name, and hosts reach no handler methods. A denied
// target is answered exactly as an unknown one, and lists are filtered the same way.
import { WIRE, WireError } from '../../errors.js';
import type { Result } from '../../jsonrpc/message.js';
import type { Stage } from '../compose.js';
import type { CallContext } from '../context.js';
import { TASK_METHODS, unknownTask } from '../../gateway/tasks.js';

/**
 * Methods every caller may use: the session handshake and housekeeping, and tasks/list, which
 * answers with the caller's own tasks only.
 */
const ALWAYS = new Set(['initialize', 'ping', 'logging/setLevel', 'tasks/list']);

const LIST_FIELD: Record<string, { key: string; field: string }> = {
  'tools/list': { key: 'tools', field: 'name' },
  'prompts/list': { key: 'prompts', field: 'name' },
  'resources/list': { key: 'resources', field: 'uri' },
  'resources/templates/list': { key: 'resourceTemplates', field: 'uriTemplate' },
};

export type Grants = (caller: CallContext['caller']) => readonly string[] | 'all';

/** `*` matches any run of characters; everything else is literal. */
/** Grants come from the frozen config, so each list compiles once, not once per call. */
const compiled = new WeakMap<readonly string[], (name: string) => boolean>();
function matcherOf(patterns: readonly string[]): (name: string) => boolean {
  let matcher = compiled.get(patterns);
  if (!matcher) compiled.set(patterns, (matcher = patternMatcher(patterns)));
  return matcher;
}

export function patternMatcher(patterns: readonly string[]): (name: string) => boolean {
  if (patterns.length === 0) return () => false;
  const body = patterns.map((p) => p.split('*').map(escapeRegex).join('.*')).join('|');
  const re = new RegExp(`^(?:${body})$`);
  return (name) => re.test(name);
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

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

function denied(ctx: CallContext): WireError {
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

export function grantStage(grants: Grants, isHandler: (method: string) => boolean): Stage {
  return async (ctx, next) => {
    if (ALWAYS.has(ctx.method)) {
      ctx.decision = { effect: 'allow', rule: 'always' };
      return next();
    }
    const granted = grants(ctx.caller);
    if (granted === 'all') {
      if (ctx.caller.kind === 'host' && isHandler(ctx.method)) {
        ctx.decision = { effect: 'deny', rule: 'grant' };
        throw denied(ctx);
      }
      ctx.decision = { effect: 'allow', rule: 'grant' };
      return next();
    }
    const allowed = matcherOf(granted);
    const list = LIST_FIELD[ctx.method];
    if (!list) {
      if (!allowed(grantSubject(ctx))) {
        ctx.decision = { effect: 'deny', rule: 'bridge.allow' };
        throw denied(ctx);
      }
      ctx.decision = { effect: 'allow', rule: 'bridge.allow' };
      return next();
    }
    // A list is allowed and filtered: what it leaves out is decided item by item below.
    ctx.decision = { effect: 'allow', rule: 'bridge.allow' };
    await next();
    const items = ctx.result?.[list.key];
    if (Array.isArray(items)) {
      const kept = items.filter((i: Record<string, unknown>) => allowed(String(i[list.field])));
      ctx.result = { ...(ctx.result as Result), [list.key]: kept };
    }
  };
}
