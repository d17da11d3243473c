// Applies the caller's view of the catalog (its profile and mode, a property of the door it came
// by): lists keep only what the profile shows, and in search mode tools/list gives the meta-tools
// and the always-visible tools instead of the whole list. A call to a name outside the profile is
// refused exactly as an unknown name. Inside the page stage (pages are cut from the view) and
// outside policy (what the view keeps has already been filtered for the caller).
import type { Caller, CallContext } from '../../call/context.js';
import type { Catalog, ListKind } from '../../catalog/catalog.js';
import { META_TOOLS, META_TOOL_NAMES } from '../../catalog/meta-tools.js';
import { RUN_SCRIPT, RUN_SCRIPT_TOOL } from '../../catalog/code-mode.js';
import type { CatalogView } from '../../catalog/view.js';
import { methodSpec } from '../../protocol/methods.js';
import { notFound } from '../../protocol/not-found.js';
import type { Stage } from '../compose.js';
import { textOf } from '../../encoding/text-of.js';

export type ViewOf = (ctx: CallContext) => CatalogView;

/** A call a meta-tool makes (its tools/list, its call by name) sees the profile's whole list. */
export function byMetaTool(ctx: CallContext): boolean {
  return ctx.parent !== undefined && isMetaCall(ctx.parent);
}

/** A call of one of switchboard's meta-tools (answered by the meta stage: it has no target). */
export function isMetaCall(c: CallContext): boolean {
  return (
    c.method === 'tools/call' &&
    (META_TOOL_NAMES.has(textOf(c.params.name)) || c.params.name === RUN_SCRIPT) &&
    !c.target
  );
}

export function viewStage(
  viewOf: ViewOf,
  catalog: Catalog,
  /** Whether the caller's list shows a meta-tool (policy over the meta-tools, meta-policy.ts). */
  metaListed: (caller: Caller, name: string) => boolean = () => true,
): Stage {
  // Not async itself: only lists are changed on the way back, and an async wrapper is a promise per call.
  return function view(ctx, next) {
    if (ctx.returning) return next();
    const v = viewOf(ctx);
    const list = methodSpec(ctx.method)?.list;
    if (list) {
      return next().then(() => {
        const items: unknown = ctx.result?.[list.key];
        if (!ctx.result || !Array.isArray(items)) return;
        let kept = items as Record<string, unknown>[];
        if (v.profile !== undefined) kept = kept.filter((i) => v.shows(list.kind, catalog.ownerOf(i), i));
        const listed = (t: Record<string, unknown>) => metaListed(ctx.caller, String(t.name));
        if (list.kind === 'tools' && v.mode === 'search' && !byMetaTool(ctx))
          kept = [...META_TOOLS.filter(listed), ...kept.filter((t) => v.alwaysVisible(String(t.name)))];
        // Code mode adds run_script, in either mode; it takes its name over a backend tool's.
        if (list.kind === 'tools' && v.codeMode && !byMetaTool(ctx)) {
          kept = kept.filter((t) => t.name !== RUN_SCRIPT);
          if (listed(RUN_SCRIPT_TOOL)) kept = [...kept, RUN_SCRIPT_TOOL];
        }
        if (kept !== items) ctx.result = { ...ctx.result, [list.key]: kept };
      });
    }
    const t = ctx.target;
    if (t && v.profile !== undefined && t.kind !== 'task') {
      let kind: ListKind;
      if (t.kind === 'tool') kind = 'tools';
      else if (t.kind === 'prompt') kind = 'prompts';
      else if (t.kind === 'completion')
        kind =
          (ctx.params.ref as { type?: unknown } | undefined)?.type === 'ref/prompt' ? 'prompts' : 'resources';
      else kind = 'resources';
      const item = t.kind === 'tool' ? { ...t.item, name: ctx.params.name } : t.item;
      if (!v.shows(kind, t, item)) throw notFound(ctx.method, ctx.params);
    }
    return next();
  };
}
