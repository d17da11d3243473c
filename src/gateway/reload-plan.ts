// What a reload changes: the backends to start, stop and replace, and the settings that differ but
// cannot change in a running switchboard (they keep their running values until a restart).
import type { BackendConfig, Config } from '../config/schema.js';
import { canonicalJson } from '../encoding/canonical-json.js';

/**
 * Settings a running switchboard applies: the backends, how their names merge, the per-caller
 * limits, the shutdown deadline, the policy's rules and defaults, and who may use the HTTP front
 * (http.auth: API keys and OAuth). `true`: the whole section; a list: those keys.
 * Anything else (the HTTP front's address, the bridge socket, audit, vault keys, the sandbox, the
 * approval settings, …) is fixed at start: the fronts, the socket, the sandbox probe and the
 * extensions are built from it once. docs/gateway.md has the table.
 */
export const LIVE: Partial<Record<keyof Config, true | readonly string[]>> = {
  servers: true,
  namespacing: true,
  shutdown: true,
  limits: ['startupTimeoutMs', 'sessionRate', 'maxCallsPerSession', 'maxQueuedPerSession'],
  policy: ['rules', 'defaults', 'file'],
  http: ['auth'],
  // What a server's sandbox lets it see is read at each of its starts; mode and bwrap are probed
  // once at start.
  sandbox: ['network', 'read', 'write', 'hide'],
};

export interface ReloadPlan {
  /** Enabled backends that were not running, were running and no longer are, or whose entry differs. */
  readonly added: string[];
  readonly removed: string[];
  readonly changed: string[];
  /** Dotted paths of settings that differ but need a restart (`http.port`, `bridge.socket`, …). */
  readonly needRestart: string[];
  /** Dotted paths of settings beside `servers` that differ and are applied (`policy.rules`, `http.auth`, …). */
  readonly applied: string[];
  /** The configuration to run: the new one, with the settings that need a restart as they run. */
  readonly config: Config;
}

export function planReload(running: Config, next: Config): ReloadPlan {
  const needRestart: string[] = [];
  const applied: string[] = [];
  const merged: Record<string, unknown> = { ...next };
  const sections = new Set([...Object.keys(running), ...Object.keys(next)] as (keyof Config)[]);
  for (const section of sections) {
    const live = LIVE[section];
    if (live === true) {
      if (section !== 'servers' && canonicalJson(running[section]) !== canonicalJson(next[section]))
        applied.push(section);
      continue;
    }
    const before = (running[section] ?? {}) as Record<string, unknown>;
    const after = (next[section] ?? {}) as Record<string, unknown>;
    const kept: Record<string, unknown> = { ...after };
    for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
      if (canonicalJson(before[key]) === canonicalJson(after[key])) continue;
      if (live?.includes(key)) {
        applied.push(`${section}.${key}`);
        continue;
      }
      needRestart.push(`${section}.${key}`);
      if (Object.hasOwn(before, key)) kept[key] = before[key];
      else delete kept[key];
    }
    merged[section] = kept;
  }
  const was = enabled(running);
  const now = enabled(next);
  const added = [...now.keys()].filter((n) => !was.has(n));
  const removed = [...was.keys()].filter((n) => !now.has(n));
  const changed = [...now].filter(([n, b]) => was.has(n) && canonicalJson(was.get(n)) !== canonicalJson(b));
  return {
    added,
    removed,
    changed: changed.map(([n]) => n),
    needRestart,
    applied,
    config: merged as Config,
  };
}

function enabled(config: Config): Map<string, BackendConfig> {
  return new Map(Object.entries(config.servers).filter(([, b]) => !b.disabled));
}

/** What is wrong when names collide under `namespacing.collisions: error`, and how to fix it. */
export function collisionProblem(
  unresolved: readonly { kind: string; exposed: string; backends: string[] }[],
): string {
  return (
    `name collisions (namespacing.collisions is "error"):\n` +
    unresolved
      .map((c) => `  ${c.kind.slice(0, -1)} "${c.exposed}" is exposed by ${c.backends.join(' and ')}`)
      .join('\n') +
    `\nGive the backends prefixes (namespacing.mode: always), or set namespacing.collisions: priority.`
  );
}

/** How reloads went: counts, why the latest was refused (while it is the latest), what waits for a restart. */
export interface ReloadState {
  applied: number;
  refused: number;
  /** Why the latest reload was refused; cleared by a later one that applies. */
  lastError: string | undefined;
  /** Settings the file changed that keep their running value until a restart. */
  needRestart: string[];
  /**
   * Servers the latest applied reload could not start, and why: a changed one keeps running as it
   * was (the file and what runs differ until a reload starts it); an added one is retried, and
   * is listed until it is up.
   */
  readonly failed: { name: string; error: string }[];
}

/** ReloadState as switchboard keeps it: what a reload could not start is read against what is up now. */
export class ReloadRecord implements ReloadState {
  applied = 0;
  refused = 0;
  lastError: string | undefined = undefined;
  needRestart: string[] = [];
  private starts: { name: string; error: string; added: boolean }[] = [];

  constructor(private readonly isUp: (name: string) => boolean) {}

  get failed(): { name: string; error: string }[] {
    return this.starts
      .filter((f) => !(f.added && this.isUp(f.name)))
      .map(({ name, error }) => ({ name, error }));
  }

  /** The servers an applied reload could not start; `added`: whether one was not running before. */
  set failedStarts(starts: { name: string; error: string; added: boolean }[]) {
    this.starts = starts;
  }

  /** As status and the log show it (a getter is not an own property JSON would see). */
  toJSON(): ReloadState {
    const { applied, refused, lastError, needRestart, failed } = this;
    return { applied, refused, lastError, needRestart, failed };
  }
}
