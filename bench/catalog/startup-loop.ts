// How long switchboard's own event loop is held while it starts many stdio backends: switchboard
// in this process over N backends (default 90, one per server of the catalog fixture, each served
// by fixture-server.ts), the longest event-loop delay until every backend is up, the time to that
// point, the CPU time spent, and how many times (and how long) the merged lists were rebuilt. Run directly:
// `node dist/bench/catalog/startup-loop.js [N]`; not a scenario of `npm run bench`.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Config } from '../../src/config/schema.js';
import { startSwitchboard } from '../../src/switchboard.js';
import { Catalog } from '../../src/catalog/catalog.js';

const FIXTURE = fileURLToPath(new URL('../../../bench/fixtures/catalog/real-tools.json', import.meta.url));
const SERVER = fileURLToPath(new URL('./fixture-server.js', import.meta.url));

const count = Number(process.argv[2] ?? 90);
const data = JSON.parse(readFileSync(FIXTURE, 'utf8')) as { servers: { server: string }[] };
// Beside the build, not in /tmp: a sandboxed backend gets a /tmp of its own.
const dir = mkdtempSync(fileURLToPath(new URL('./startup-slices-', import.meta.url)));
const servers = Object.fromEntries(
  data.servers.slice(0, count).map((s, i) => {
    const file = join(dir, `${i}.json`);
    writeFileSync(file, JSON.stringify({ servers: [s] }));
    return [s.server, { command: process.execPath, args: [SERVER, '--file', file, '--server', s.server] }];
  }),
);
const stateDir = mkdtempSync(join(tmpdir(), 'startup-loop-'));
const config = Config.parse({
  servers,
  namespacing: { mode: 'always', collisions: 'priority' },
  http: { port: 0 },
  state: { path: join(stateDir, 'state.sqlite') },
  log: { level: 'silent' },
});

// Counts merged-list rebuilds: the catalog's work per change, whatever calls it.
let rebuilds = 0;
let rebuildMs = 0;
const proto = Catalog.prototype as unknown as { rebuild(kind: string): void };
const rebuild = proto.rebuild;
proto.rebuild = function (this: unknown, kind: string) {
  if (kind === 'tools') rebuilds++;
  const began = performance.now();
  try {
    return rebuild.call(this, kind);
  } finally {
    rebuildMs += performance.now() - began;
  }
};

const delay = monitorEventLoopDelay({ resolution: 1 });
const cpu0 = process.cpuUsage();
const t0 = performance.now();
delay.enable();
const sb = await startSwitchboard({ config, http: true });
await sb.ready;
const wall = performance.now() - t0;
delay.disable();
const cpu = process.cpuUsage(cpu0);
const tools = (sb.gateway.catalog.list('tools').tools as unknown[]).length;
await sb.stop();
rmSync(dir, { recursive: true, force: true });
rmSync(stateDir, { recursive: true, force: true });
process.stdout.write(
  `${JSON.stringify({
    backends: count,
    tools,
    failed: sb.failedBackends.length,
    maxLoopDelayMs: Math.round(delay.max / 1e6),
    p99LoopDelayMs: Math.round(delay.percentile(99) / 1e6),
    toReadyMs: Math.round(wall),
    cpuMs: Math.round((cpu.user + cpu.system) / 1000),
    toolListRebuilds: rebuilds,
    rebuildMs: Math.round(rebuildMs),
  })}\n`,
);
