// Shared by the policy and approval tests: a switchboard with its pino output captured, and the
// audit records of a database file.
import { Writable } from 'node:stream';
import type { TestContext } from 'node:test';
import { pino } from 'pino';
import { Config, type ConfigInput } from '../../src/config/schema.js';
import { startSwitchboard, type Switchboard } from '../../src/switchboard.js';
import { openTrustDb } from '../../src/trust/trust-db.js';

export interface Logged {
  sb: Switchboard;
  /** Every log line so far, parsed. */
  lines(): Record<string, unknown>[];
}

export async function startLogged(t: TestContext, input: ConfigInput): Promise<Logged> {
  const out: string[] = [];
  const log = pino(
    { level: 'debug' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        out.push(chunk.toString());
        done();
      },
    }),
  );
  const config = Config.parse({ ...input, http: { ...input.http, port: 0 } });
  const sb = await startSwitchboard({ config, log, http: true });
  t.after(() => sb.stop());
  return {
    sb,
    lines: () =>
      out
        .join('')
        .split('\n')
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

export interface AuditRow {
  method: string;
  target_name: string | null;
  decision: string;
  rule: string | null;
  outcome: string;
  args: string | null;
}

/** The audit records of a file, oldest first (after the switchboard flushed them). */
export function auditRows(sb: Switchboard, path: string): AuditRow[] {
  sb.flushAudit();
  const db = openTrustDb(path, { readonly: true });
  try {
    return db.prepare('SELECT * FROM audit ORDER BY seq').all() as AuditRow[];
  } finally {
    db.close();
  }
}

/** Polls `check` until it returns a value (no timing assertion: the test's own timeout bounds it). */
export async function until<T>(check: () => T | undefined, everyMs = 20): Promise<T> {
  for (;;) {
    const v = check();
    if (v !== undefined) return v;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
