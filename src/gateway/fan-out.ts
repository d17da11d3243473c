// Fans changes out: a merged list's change to the host sessions and listen streams that hear it,
// and what host sessions set (their log level, their roots) to the backends that take it.
import type { ListenFilter } from '../backends/backend.js';
import type { Upstream } from '../backends/upstream.js';
import type { ListKind } from '../catalog/catalog.js';
import { messageOf } from '../jsonrpc/peer.js';
import type { Logger } from '../log.js';
import { LOG_LEVELS, logLevelRank, type LogLevel } from '../protocol/versions.js';
import type { LegacySession } from '../sessions/legacy-session.js';
import type { Listener } from './backend-messages.js';

export interface FanOutDeps {
  sessions: ReadonlyMap<string, LegacySession>;
  backends(): Iterable<Upstream>;
  log: Logger;
}

export class FanOut {
  /** Modern callers' subscriptions/listen streams, by key: what they opted in to, and their way out. */
  private readonly listeners = new Map<string, Listener>();
  private backendLogLevel: LogLevel | undefined;

  constructor(private readonly deps: FanOutDeps) {}

  /** The level backends are asked to send at: none until a session asks for one. */
  get logLevel(): LogLevel | undefined {
    return this.backendLogLevel;
  }

  /** A listen stream by the key its subscriptions are held under. */
  listener(key: string): Listener | undefined {
    return this.listeners.get(key);
  }

  /** A modern caller's listen stream joins the list-change and resource-update audience. */
  addListener(
    key: string,
    filter: ListenFilter,
    notify: Listener['notify'],
    end?: Listener['end'],
  ): () => void {
    this.listeners.set(key, { filter, notify, ...(end ? { end } : {}) });
    return () => this.listeners.delete(key);
  }

  listChanged(kind: ListKind): void {
    const family = kind === 'resourceTemplates' ? 'resources' : kind;
    const method = `notifications/${family}/list_changed`;
    for (const s of this.deps.sessions.values()) if (s.initialized) s.notify(method);
    const flag = `${family}ListChanged` as const;
    for (const l of this.listeners.values()) if (l.filter[flag]) l.notify(method);
  }

  /** The most verbose level any session asked for is what backends send; sessions filter. */
  logLevelsChanged(): void {
    const levels = [...this.deps.sessions.values()].map((s) => s.logLevel).filter((l) => l !== undefined);
    const level = levels.length ? LOG_LEVELS[Math.min(...levels.map(logLevelRank))] : undefined;
    if (!level || level === this.backendLogLevel) return;
    this.backendLogLevel = level;
    for (const b of this.deps.backends()) {
      if (b.state === 'ready' && takesLogLevel(b)) {
        void b
          .request('logging/setLevel', { level })
          .catch((err) =>
            this.deps.log.warn({ backend: b.name, err: messageOf(err) }, 'backend refused logging/setLevel'),
          );
      }
    }
  }

  rootsChanged(): void {
    for (const b of this.deps.backends()) {
      // The modern era has no such notification: a modern backend asks for roots with each call.
      if (b.state === 'ready' && !b.isModern)
        void b.notify('notifications/roots/list_changed').catch(() => {});
    }
  }
}

/** Whether a backend is told the log level: one that logs, unless modern (it takes it with each request). */
export function takesLogLevel(b: Upstream): boolean {
  return Boolean(b.capabilities.logging) && !b.isModern;
}
