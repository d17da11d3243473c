// Shared by the trust tests: a temp directory for the SQLite file, removed when the test ends.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { newCallId, type CallContext, type Reply } from '../../src/call/context.js';

export const SHIFTING = fileURLToPath(new URL('../fixtures/shifting-server.js', import.meta.url));
export const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

export async function tempDbPath(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'switchboard-trust-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return join(dir, 'audit.sqlite');
}

/** Captures what a CLI command writes. */
export function captureIo(): {
  out: string[];
  err: string[];
  io: { out(l: string): void; err(l: string): void };
} {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (l) => void out.push(l), err: (l) => void err.push(l) } };
}

/**
 * An ended `tools/call` as the audit writer sees it: call `tool<i>` on backend `b` with `{ i }`,
 * allowed by rule `grant`, from `caller` over a session named `session`.
 */
export function toolCall(
  i: number,
  caller: CallContext['caller'] = { kind: 'host', id: 'stdio' },
  reply: Partial<Reply> = {},
): CallContext {
  return {
    callId: newCallId(),
    caller,
    method: 'tools/call',
    params: { name: `tool${i}`, arguments: { i } },
    target: { backend: 'b', name: `tool${i}`, kind: 'tool' },
    decision: { effect: 'allow', rule: 'grant' },
    startedAt: performance.now(),
    reply: { sessionKey: 'session', era: 'legacy', capabilities: {}, ...reply },
  } as unknown as CallContext;
}

/** `switchboard audit verify --db path` in its own process: its exit code and what it printed. */
export async function verifyCli(
  path: string,
  ...extra: string[]
): Promise<{ code: number; out: string; err: string }> {
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [
      CLI,
      'audit',
      'verify',
      '--db',
      path,
      ...extra,
    ]);
    return { code: 0, out: stdout, err: '' };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, out: e.stdout, err: e.stderr };
  }
}
