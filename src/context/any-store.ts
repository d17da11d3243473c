// A context store whose operations may answer later: the state database's answers at once, a
// store shared by the mesh's nodes (JetStream KV) over the network. Same methods, same meaning.
import type { ContextStore } from './store.js';

type MaybeLater<F> = F extends (...args: infer A) => infer R ? (...args: A) => R | Promise<R> : never;

/** ContextStore with every result possibly a promise: callers await each one. */
export type AnyContextStore = { [K in keyof ContextStore]: MaybeLater<ContextStore[K]> };
