// The caller's own tools list, as the meta-tools answer from it (a child tools/list through the
// pipeline), kept for the next search of the same caller through the same door while the catalog
// and the policy are the ones it was made from and it is younger than catalog.refreshIntervalMs:
// a search over thousands of tools then costs the search, not a listing (policy and redaction of
// every definition, and a re-read of the backends that announce no changes) each time.
import { callerKey } from '../../policy/policy.js';
import type { CallContext } from '../../call/context.js';
import type { Item } from '../../catalog/catalog.js';

/** What a kept list was made from: it is used only while both are still the ones in force. */
export interface ListVersion {
  catalog: unknown;
  policy: unknown;
}

interface Kept {
  version: ListVersion;
  at: number;
  tools: Promise<Item[]>;
}

/** Callers (with door and era) kept at once; past this the memo starts over. */
const MAX_KEPT = 1_000;

export class VisibleLists {
  private readonly kept = new Map<string, Kept>();

  constructor(
    /** How long a list is used at most (0: every meta-tool call lists again). */
    private readonly maxAgeMs: number,
    private readonly version: () => ListVersion,
  ) {}

  /** The caller's list: the kept one if still good, else `list()` (shared by concurrent calls). */
  get(ctx: CallContext, list: () => Promise<Item[]>): Promise<Item[]> {
    if (this.maxAgeMs <= 0) return list();
    const key = `${callerKey(ctx.caller)}\0${ctx.reply.view ?? ''}\0${ctx.reply.era}\0${ctx.path.join('\0')}`;
    const version = this.version();
    const now = performance.now();
    const k = this.kept.get(key);
    if (
      k &&
      k.version.catalog === version.catalog &&
      k.version.policy === version.policy &&
      now - k.at < this.maxAgeMs
    )
      return k.tools;
    if (this.kept.size >= MAX_KEPT) this.kept.clear();
    const tools = list();
    this.kept.set(key, { version, at: now, tools });
    // A failed listing is not kept: the next call tries again.
    tools.catch(() => {
      if (this.kept.get(key)?.tools === tools) this.kept.delete(key);
    });
    return tools;
  }
}
