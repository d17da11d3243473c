// Where the benchmark finds the built gateway, its fixture and its results directory.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// This file runs as dist/bench/lib/paths.js: three levels up is the repository root.
export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
// SWITCHBOARD_BENCH_GATEWAY measures another build (an older commit's) against the same baselines.
export const GATEWAY_MAIN =
  process.env.SWITCHBOARD_BENCH_GATEWAY ?? join(ROOT, 'dist', 'src', 'cli', 'main.js');
export const ECHO_SERVER = join(ROOT, 'dist', 'bench', 'fixtures', 'echo-server.js');
export const PIPE_PROXY = join(ROOT, 'dist', 'bench', 'fixtures', 'pipe-proxy.js');
export const JSON_PROXY = join(ROOT, 'dist', 'bench', 'fixtures', 'json-proxy.js');
export const NATS_RELAY = join(ROOT, 'dist', 'bench', 'fixtures', 'nats-relay.js');
export const HTTP_RELAY = join(ROOT, 'dist', 'bench', 'fixtures', 'http-relay.js');
export const RESULTS_DIR = join(ROOT, 'bench', 'results');
