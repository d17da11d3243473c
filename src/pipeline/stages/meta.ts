// Answers the search-mode meta-tools (search_tools, describe_tools, call_tool) for a caller whose
// view is in search mode. Each is answered from the caller's own list, fetched as a child
// tools/list through the pipeline (so policy and the profile decide what can be found), and
// call_tool is a child tools/call of the same caller: policy, approval, audit (linked by
// parentCallId), redaction, progress, cancellation and tasks apply to the real tool as to a
// direct call, and a name the caller cannot see gets exactly the error an unknown name gets.
// In code mode it also answers run_script (code-mode.ts), in either catalog mode. The outer call
// itself is judged first, as a tool of the server `switchboard` (meta-policy.ts).
import type { CallContext } from '../../call/context.js';
import type { Catalog, Item } from '../../catalog/catalog.js';
import { CALL_TOOL, DESCRIBE_TOOL, META_TOOL_NAMES, SEARCH_TOOL, oneLine } from '../../catalog/meta-tools.js';
import type { ToolSearch } from '../../catalog/tool-search.js';
import { LocalError, WIRE, WireError } from '../../errors/errors.js';
import { isAborted } from '../../call/new-call.js';
import { abortable } from '../../call/signals.js';
import type { Params, Result } from '../../jsonrpc/message.js';
import { CHAIN_META } from '../../protocol/chain-meta.js';
import { notFound } from '../../protocol/not-found.js';
import type { Stage } from '../compose.js';
import type { ViewOf } from './view.js';
import type { Starting } from './resolve.js';
import { RUN_SCRIPT, limitsOf } from '../../catalog/code-mode.js';
import { answerRunScript } from './code-mode.js';
import type { CodeModeConfig } from '../../config/catalog-schema.js';
import { judgeMeta, type MetaPolicy } from './meta-policy.js';
import type { VisibleLists } from './meta-lists.js';
import { plain } from '../../encoding/raw-text.js';

export interface MetaServices extends MetaPolicy {
  viewOf: ViewOf;
  catalog: Catalog;
  search: ToolSearch;
  /**
   * A further call by the same caller, as a child of `parent`, through the pipeline; `signal`
   * aborts it sooner than its parent would be (a script's limits).
   */
  dispatch(parent: CallContext, method: string, params?: Params, signal?: AbortSignal): Promise<Result>;
  /** The largest message a host may send: a script's tool call is no larger. */
  maxMessageBytes: number;
  /** The caller's list kept between meta-tool calls; none: each lists again. */
  lists?: VisibleLists | undefined;
  /** Backends still starting, to wait for before a search (or a script) sees the catalog. */
  starting?: Starting | undefined;
}

/** A list can be paged: this many pages at most are followed (a cursor loop cannot run away). */
const MAX_PAGES = 10_000;

export function metaStage(s: MetaServices): Stage {
  // Not async itself: most calls pass straight through, and an async wrapper is a promise per call.
  return function meta(ctx, next) {
    if (ctx.returning || ctx.method !== 'tools/call') return next();
    const name = ctx.params.name;
    if (name === RUN_SCRIPT) {
      const code = s.viewOf(ctx).codeMode;
      return code ? runScript(s, ctx, code) : next();
    }
    if (typeof name !== 'string' || !META_TOOL_NAMES.has(name)) return next();
    if (s.viewOf(ctx).mode !== 'search') return next();
    return answerMeta(s, ctx, name);
  };
}

async function runScript(s: MetaServices, ctx: CallContext, code: CodeModeConfig): Promise<void> {
  // A script (or query) long enough to have come in as bytes is read here as text.
  const args = plain(ctx.params.arguments ?? {}) as Record<string, unknown>;
  await judgeMeta(s, ctx, RUN_SCRIPT, args);
  const limits = limitsOf(code, s.maxMessageBytes);
  const answer = await answerRunScript(ctx, limits, args, await visibleTools(s, ctx), s.dispatch);
  // Stopped because its caller cancelled: the call ends as any cancelled call does (so recorded),
  // not as a script that failed.
  if (isAborted(ctx)) throw new LocalError('cancelled', 'Request cancelled');
  ctx.result = answer;
}

async function answerMeta(s: MetaServices, ctx: CallContext, name: string): Promise<void> {
  const args = plain(ctx.params.arguments ?? {}) as Record<string, unknown>;
  await judgeMeta(s, ctx, name, args);
  switch (name) {
    case SEARCH_TOOL:
      ctx.result = await search(s, ctx, args);
      return;
    case DESCRIBE_TOOL:
      ctx.result = await describe(s, ctx, args);
      return;
    case CALL_TOOL:
      ctx.result = await callByName(s, ctx, args);
      return;
  }
}

/**
 * Every tool the caller may see through its view, as a direct tools/list would give it; once the
 * backends still starting are up (or given up on), as a call to a name not found yet waits: a
 * search made just after start would otherwise find nothing, and the model take that for an answer.
 */
async function visibleTools(s: MetaServices, ctx: CallContext): Promise<Item[]> {
  const starting = s.starting?.(ctx, true);
  if (starting)
    await abortable(starting, ctx.signal).catch(() => {
      // The one way the wait ends early: the caller cancelled.
      throw new LocalError('cancelled', 'Request cancelled');
    });
  return s.lists ? s.lists.get(ctx, () => listAll(s, ctx)) : listAll(s, ctx);
}

async function listAll(s: MetaServices, ctx: CallContext): Promise<Item[]> {
  const tools: Item[] = [];
  let cursor: unknown;
  for (let i = 0; i < MAX_PAGES; i++) {
    const page = await s.dispatch(ctx, 'tools/list', cursor === undefined ? {} : { cursor });
    tools.push(...((page.tools as Item[] | undefined) ?? []));
    cursor = page.nextCursor;
    if (cursor === undefined) break;
  }
  return tools;
}

async function search(s: MetaServices, ctx: CallContext, args: Record<string, unknown>): Promise<Result> {
  const query = args.query;
  if (typeof query !== 'string' || query.trim() === '')
    throw new WireError(WIRE.INVALID_PARAMS, 'search_tools needs arguments.query, a non-empty string');
  const limit = args.limit === undefined ? s.viewOf(ctx).search.limit : args.limit;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > 50)
    throw new WireError(WIRE.INVALID_PARAMS, 'search_tools arguments.limit must be an integer from 1 to 50');
  const visible = new Map((await visibleTools(s, ctx)).map((t) => [String(t.name), t]));
  const ranked = s.search.search(
    s.catalog.list('tools').tools as Item[],
    query,
    (n) => visible.has(n),
    limit,
  );
  const tools = ranked.map((r) => {
    const t = visible.get(r.name)!;
    return { name: r.name, description: oneLine(t.description ?? t.title) };
  });
  const text = tools.length
    ? tools.map((t) => `${t.name}: ${t.description}`).join('\n')
    : `No tool matches "${query}".`;
  return { content: [{ type: 'text', text }], structuredContent: { tools } };
}

async function describe(s: MetaServices, ctx: CallContext, args: Record<string, unknown>): Promise<Result> {
  const names = args.names;
  if (!Array.isArray(names) || names.length === 0 || !names.every((n) => typeof n === 'string'))
    throw new WireError(WIRE.INVALID_PARAMS, 'describe_tools needs arguments.names, a list of tool names');
  const visible = new Map((await visibleTools(s, ctx)).map((t) => [String(t.name), t]));
  const tools = names.filter((n) => visible.has(n)).map((n) => visible.get(n)!);
  // What the caller may not see reads exactly as what does not exist.
  const unknown = names.filter((n) => !visible.has(n));
  const text = [...tools.map((t) => JSON.stringify(t)), ...unknown.map((n) => `Unknown tool: ${n}`)].join(
    '\n',
  );
  return {
    content: [{ type: 'text', text }],
    structuredContent: { tools, unknown },
    ...(tools.length === 0 ? { isError: true } : {}),
  };
}

async function callByName(s: MetaServices, ctx: CallContext, args: Record<string, unknown>): Promise<Result> {
  const name = args.name;
  if (typeof name !== 'string' || name.length === 0)
    throw new WireError(WIRE.INVALID_PARAMS, 'call_tool needs arguments.name, a tool name');
  // The meta-tools are not in the catalog: through call_tool they are unknown names.
  if (META_TOOL_NAMES.has(name) || (name === RUN_SCRIPT && s.viewOf(ctx).codeMode))
    throw notFound('tools/call', { name });
  // The outer call's progress token and task request carry over, so the tool's progress reaches
  // the caller under the token it gave, and a task it creates is the caller's.
  const { [CHAIN_META]: _chain, ...meta } = ctx.params._meta ?? {};
  const params: Params = {
    name,
    ...(args.arguments === undefined ? {} : { arguments: args.arguments }),
    ...(Object.keys(meta).length ? { _meta: meta } : {}),
    ...(ctx.params.task === undefined ? {} : { task: ctx.params.task }),
  };
  return s.dispatch(ctx, 'tools/call', params);
}
