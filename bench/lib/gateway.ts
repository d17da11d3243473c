// The gateway under test: whether it is built, how to start it, and a throwaway config of echo backends.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

import { stringify } from 'yaml';

import { ECHO_SERVER, GATEWAY_MAIN, ROOT } from './paths.js';
import { youngAllocFlags } from './young-marks.js';

/** Why the through-switchboard scenarios cannot run, or undefined when they can. */
export function gatewayMissing(): string | undefined {
  if (existsSync(GATEWAY_MAIN)) return undefined;
  return `${relative(ROOT, GATEWAY_MAIN)} does not exist yet (build the gateway with \`npx tsc -p .\`, then rerun)`;
}

export interface EchoBackend {
  readonly name: string;
  /** Arguments of bench/fixtures/echo-server after its path, e.g. `['--stdio', '--tools', '20']`. */
  readonly args: readonly string[];
  /** An echo server already serving Streamable HTTP there: reached at its URL, not spawned. */
  readonly url?: string;
  /**
   * The era switchboard speaks to it (the echo server serves both): `legacy` keeps a same-era
   * comparison with a legacy host; unset, switchboard probes and picks modern.
   */
  readonly era?: 'legacy' | 'modern';
  /** More keys of its server entry (restart delays, timeouts, …). */
  readonly entry?: Record<string, unknown>;
}

const tempDirs = new Set<string>();
process.on('exit', () => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

/**
 * SWITCHBOARD_BENCH_CONFIG='<JSON object>': top-level sections laid over every gateway config a
 * scenario writes (`{"audit":{"enabled":false}}`), to read what a feature costs against the same
 * baseline.
 */
function configOverride(): Record<string, unknown> {
  const text = process.env.SWITCHBOARD_BENCH_CONFIG;
  if (!text) return {};
  const parsed: unknown = JSON.parse(text);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new Error('SWITCHBOARD_BENCH_CONFIG must be a JSON object of config sections');
  return parsed as Record<string, unknown>;
}

/** Writes a config fronting the given echo backends (spawned with this very node) and returns its path. */
export function writeGatewayConfig(
  backends: readonly EchoBackend[],
  extra: Record<string, unknown> = {},
): string {
  const dir = mkdtempSync(join(tmpdir(), 'switchboard-bench-'));
  tempDirs.add(dir);
  const servers = Object.fromEntries(
    backends.map((backend) => [
      backend.name,
      {
        ...(backend.url
          ? { url: backend.url }
          : { command: process.execPath, args: [ECHO_SERVER, ...backend.args] }),
        ...(backend.era && { era: backend.era }),
        ...backend.entry,
      },
    ]),
  );
  const path = join(dir, 'switchboard.yaml');
  // Open on loopback, as the SDK servers compared with it are: the default local token costs one
  // SHA-256 of the header per request (~1 µs), and would have every client here read a file.
  const open = { ...(extra['http'] as object | undefined), auth: { mode: 'none' } };
  writeFileSync(path, stringify({ servers, ...extra, http: open, ...configOverride() }));
  return path;
}

/** BENCH_CPU_PROF=<dir>: each switchboard a scenario starts writes a V8 CPU profile there when it stops. */
const PROFILE = process.env.BENCH_CPU_PROF;
// A finer interval than V8's 1 ms default: an echo call costs a fraction of a millisecond.
/**
 * Node flags for each switchboard process: write a CPU profile (BENCH_CPU_PROF=<dir>), report its
 * young-generation allocation (BENCH_GC=<dir>), any given in BENCH_NODE_FLAGS (separated by white
 * space, e.g. `--perf-basic-prof`: the SDK's stdio client passes a child only a few environment
 * variables, so NODE_OPTIONS does not reach it), else none.
 */
export const profileFlags = [
  ...(PROFILE ? ['--cpu-prof', '--cpu-prof-interval=250', `--cpu-prof-dir=${PROFILE}`] : []),
  ...(process.env.BENCH_NODE_FLAGS?.split(/\s+/).filter(Boolean) ?? []),
  ...youngAllocFlags,
];

/** argv (after `node`) of `switchboard up` with a stdio front or an HTTP front on a free port. */
export function gatewayArgs(configPath: string, front: 'stdio' | 'http'): string[] {
  const frontArgs = front === 'stdio' ? ['--stdio'] : ['--port', '0'];
  return [...profileFlags, GATEWAY_MAIN, 'up', '--config', configPath, ...frontArgs];
}
