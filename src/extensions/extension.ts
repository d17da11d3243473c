// The extension interface: an extension registers handler methods into the handler chain and may
// call anything through the same pipeline as everyone else (as a workflow-kind caller of its name).
import type { Handler } from '../handlers/handler-chain.js';
import type { Config } from '../config/schema.js';
import type { Params, Result } from '../jsonrpc/message.js';
import type { Logger } from '../log.js';
import type { Vault } from '../vault/vault.js';
import type { StateDb } from '../state/state-db.js';
import type { AnyContextStore } from '../context/any-store.js';
import type { CatalogSource } from '../pipeline/catalog-source.js';

export interface ExtensionApi {
  readonly config: Config;
  readonly log: Logger;
  /** The vault opened at start (its file and the inline vault.keys). */
  readonly vault: Vault;
  /** The state database (SQLite) opened at start: extensions keep their tables in it (migrate). */
  readonly state: StateDb;
  /** The context store the mesh's nodes share (mesh.state: jetstream); unset: the state database's. */
  readonly contextStore?: AnyContextStore | undefined;
  /** Serves `method` (e.g. `vault.sign`) or a family (`vault.*`) inside switchboard. */
  handle(method: string, handler: Handler): void;
  /** Calls a tool, resource, prompt or handler as this extension, through the pipeline. */
  dispatch(method: string, params?: Params, signal?: AbortSignal): Promise<Result>;
  /**
   * Adds an in-process catalog source (its items listed, judged and audited like a backend's);
   * returns what to call when its lists changed.
   */
  addSource(source: CatalogSource): () => void;
}

/** What a set-up extension holds open while switchboard runs. */
export interface Running {
  close(): void;
}

export interface Extension {
  readonly name: string;
  /**
   * Handler methods of this extension that only backends may call: no host reaches them, whatever
   * a policy rule grants, and `switchboard validate` names rules broad enough to grant them.
   */
  readonly backendOnly?: readonly string[];
  /** Handler methods that stay open until their caller cancels (watch, subscribe): no time limit. */
  readonly streaming?: readonly string[];
  /** Registers the handlers; what it returns is closed when switchboard stops (timers, open watches). */
  setup(api: ExtensionApi): void | Running | Promise<void | Running>;
}
