// What a stop's drain cut short, said once: how many calls and to which backends (they were
// still under way after shutdown.drainMs, and their callers got an error).
import type { Logger } from '../log.js';

export function reportCut(
  log: Logger,
  cut: readonly { call: string; backend: string | undefined }[],
  drainMs: number,
): void {
  if (cut.length === 0) return;
  const perBackend: Record<string, number> = Object.create(null) as Record<string, number>;
  for (const c of cut)
    perBackend[c.backend ?? 'switchboard'] = (perBackend[c.backend ?? 'switchboard'] ?? 0) + 1;
  const where = Object.entries(perBackend).map(([b, n]) => `${n} to ${b}`);
  log.warn(
    { cut: cut.map((c) => c.call), perBackend },
    `shutdown cut ${cut.length} calls still under way after ${drainMs} ms (${where.join(', ')})`,
  );
}
