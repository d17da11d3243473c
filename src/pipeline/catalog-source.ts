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
  /**
   * Answers a call on one of its items (tools/call, resources/read, prompts/get) that passed policy.
   * A CreateTaskResult (`{task}` or `resultType: "task"`) makes a task of the source's, remembered
   * as the caller's and namespaced (`<name>:<taskId>`) like a backend's.
   */
  call(ctx: CallContext): Promise<Result>;
  /** Present when the source runs calls on its items as MCP tasks. */
  readonly tasks?: SourceTasks;
  /**
   * The URI scheme its resources use (`context`), when it has one of its own: its URIs are exposed
   * as they are rather than prefixed, and every URI of that scheme is resolved to it.
   */
  readonly uriScheme?: string;
  /**
   * Present when callers may subscribe to its resources: called when the first subscriber of
   * `uri` (its own URI) comes; it calls `updated` on each change until the returned stop is
   * called, when the last subscriber leaves. Subscriptions pass the pipeline like a backend's.
   */
  watch?(uri: string, updated: () => void): () => void;
}

/** A source's own tasks: the task routing treats it as a backend that owns them. */
export interface SourceTasks {
  /** What it adds to the capabilities hosts are told (`tasks`, the tasks extension). */
  readonly capabilities: Record<string, unknown>;
  /** tasks/get, tasks/result, tasks/cancel on one of its tasks (its own id; the caller owns it). */
  call(ctx: CallContext, taskId: string): Promise<Result>;
  /** Its tasks with their own ids, for tasks/list (only the caller's are kept). */
  list(ctx: CallContext): Promise<Record<string, unknown>[]>;
}
