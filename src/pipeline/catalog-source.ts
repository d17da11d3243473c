// An in-process catalog source: a part of switchboard that contributes tools (resources, prompts)
// to the one catalog as if it were a backend, and answers the calls on them. Resolve, page,
// policy, pins, list_changed and audit treat its items like any backend's; route hands the call to
// it instead of to a backend connection. Workflows are one; a context store's resources another.
import type { CallContext } from '../call/context.js';
import type { Lists } from '../catalog/catalog.js';
import type { Result } from '../jsonrpc/message.js';

export interface CatalogSource {
  /** The server name its items belong to: their prefix, and what policy rules name in `backends`. */
  readonly name: string;
  /**
   * What it offers now, by list, with its own names (the catalog prefixes them). Read again when
   * the source says it changed, and when any backend's tools change (a source may derive from them).
   */
  lists(): Lists;
  /** Answers a call on one of its items (tools/call, resources/read, prompts/get) that passed policy. */
  call(ctx: CallContext): Promise<Result>;
}
