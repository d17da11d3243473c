// Who watches which keys of a context store, and telling them of a change: the part every store
// implementation shares (SQLite here, a JetStream KV bucket for the mesh).
import type { Change, ChangeListener } from './store.js';

interface Watcher {
  prefix: string;
  listener: ChangeListener;
}

export class Watchers {
  private readonly byScope = new Map<string, Set<Watcher>>();

  /** Adds a watch on the keys of `scope` starting with `prefix`; the function returned removes it. */
  add(scope: string, prefix: string, listener: ChangeListener): () => void {
    let set = this.byScope.get(scope);
    if (!set) this.byScope.set(scope, (set = new Set()));
    const w: Watcher = { prefix, listener };
    set.add(w);
    return () => {
      set.delete(w);
      if (set.size === 0 && this.byScope.get(scope) === set) this.byScope.delete(scope);
    };
  }

  /** Tells every watch the change falls under. */
  emit(change: Change): void {
    const set = this.byScope.get(change.scope);
    if (!set) return;
    for (const w of [...set]) {
      if (!change.key.startsWith(w.prefix)) continue;
      try {
        w.listener(change);
      } catch {
        // A watcher's failure is its own; the write has happened for everyone.
      }
    }
  }

  clear(): void {
    this.byScope.clear();
  }
}
