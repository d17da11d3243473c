// `npm run bench -- catalog-modes`: the real switchboard over a catalog of real tool definitions
// (bench/fixtures/catalog/real-tools.json, served per original server by fixture-server.ts).
// Prints the tokens a host receives for tools/list in full mode against search mode (the
// meta-tools plus a typical search answer), counted with js-tiktoken, and the retrieval quality of
// search_tools (recall@1, recall@5, MRR) on the tuning task set and, separately, the held-out one.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { getEncoding } from 'js-tiktoken';
import { gatewayArgs } from '../lib/gateway.js';
import { messageOf } from '../lib/endpoints.js';
import { spawnChild } from '../lib/processes.js';
import { cpuTimeMs } from '../lib/proc.js';
import { codeModeJob } from './code-mode-job.js';

const ENCODING = 'o200k_base';
const FIXTURE = fileURLToPath(new URL('../../../bench/fixtures/catalog/real-tools.json', import.meta.url));
const TASKS = (file: string) =>
  JSON.parse(
    readFileSync(fileURLToPath(new URL(`../../../bench/catalog/${file}`, import.meta.url)), 'utf8'),
  ) as {
    task: string;
    server: string;
    tool: string;
  }[];
const SERVER = fileURLToPath(new URL('./fixture-server.js', import.meta.url));

interface Quality {
  tasks: number;
  missing: string[];
  recall1: number;
  recall5: number;
  mrr: number;
}

export async function runCatalogModes(_argv: readonly string[]): Promise<number> {
  const data = JSON.parse(readFileSync(FIXTURE, 'utf8')) as {
    total: number;
    servers: { server: string; package: string; version: string; tools: unknown[] }[];
  };
  // Each backend process reads only its own server's tools (the whole fixture is 6.7 MB of JSON:
  // 90 processes each parsing all of it cost more CPU at start than switchboard itself).
  // Beside the build, not in the temporary directory: a sandboxed backend gets a /tmp of its own.
  const dir = mkdtempSync(fileURLToPath(new URL('./slices-', import.meta.url)));
  const servers = Object.fromEntries(
    data.servers.map((s, i) => {
      const file = join(dir, `${i}.json`);
      writeFileSync(file, JSON.stringify({ servers: [s] }));
      return [s.server, { command: process.execPath, args: [SERVER, '--file', file, '--server', s.server] }];
    }),
  );
  const config = {
    servers,
    namespacing: { mode: 'always', collisions: 'priority' },
    catalog: { profiles: { search: { mode: 'search' } } },
    startup: { waitMs: 60_000 },
    log: { level: process.env.CATALOG_BENCH_LOG ?? 'warn' },
  };
  // Not beside the slices: a sandboxed backend sees the config file's directory emptied.
  const configDir = mkdtempSync(join(tmpdir(), 'catalog-modes-'));
  const configPath = join(configDir, 'switchboard.json');
  writeFileSync(configPath, JSON.stringify(config));
  const phases = phaseClock();
  // Its own process, as a host meets it: the hosts here share no event loop with it, and its CPU
  // time is its own (/proc/<pid>/stat).
  const sb = spawnChild('switchboard (catalog-modes)', process.execPath, gatewayArgs(configPath, 'http'));
  phases.cpuOf(sb.pid);
  try {
    const base = await sb
      .waitForStderr(/Streamable HTTP: (\S+)/, 120_000)
      .then((m) => m[1]!)
      .catch((err: unknown) => {
        throw new Error(`${messageOf(err)}\n${sb.stderrTail()}`);
      });
    phases.lap('start switchboard');
    const full = await connect(base);
    const search = await connect(`${base}/search`);
    phases.lap('connect two hosts');
    const fullList = await full.listTools();
    phases.lap('tools/list, full mode (waits for the backends to start)');
    if (fullList.tools.length === 0) throw new Error(`no tool listed:\n${sb.stderrTail()}`);
    const searchList = await search.listTools();
    const typical = await search.callTool({ name: 'search_tools', arguments: { query: 'create an issue' } });
    phases.lap('tools/list and one search_tools, search mode');
    const names = new Set(fullList.tools.map((t) => t.name));
    const out: string[] = [];
    out.push(
      `catalog: ${fullList.tools.length} tools listed from ${data.servers.length} servers (${data.total} gathered)`,
    );
    for (const [label, file] of [
      ['tuning', 'tasks-tuning.json'],
      ['held-out', 'tasks-held-out.json'],
    ] as const) {
      if (!existsSync(fileURLToPath(new URL(`../../../bench/catalog/${file}`, import.meta.url)))) {
        out.push(`search quality, ${label} set: bench/catalog/${file} is missing`);
        continue;
      }
      const q = await quality(search, TASKS(file), names);
      phases.lap(`${q.tasks} search_tools calls, ${label} set`);
      out.push(
        `search quality, ${label} set (${q.tasks} tasks): recall@1 ${q.recall1.toFixed(3)}  recall@5 ${q.recall5.toFixed(3)}  MRR ${q.mrr.toFixed(3)}` +
          (q.missing.length ? `  (${q.missing.length} tasks name a tool not in the catalog, left out)` : ''),
      );
    }
    await full.close();
    await search.close();
    // Counted once every call is made: encoding a million tokens holds this process's event loop
    // for seconds, long enough for switchboard to close the hosts' idle keep-alive connections
    // (5 s) under them before they notice.
    const enc = getEncoding(ENCODING);
    const tokens = (v: unknown) => enc.encode(JSON.stringify(v)).length;
    const fullTokens = tokens(fullList.tools);
    const searchTokens = tokens(searchList.tools) + tokens(typical.content);
    out.splice(
      1,
      0,
      `tokens (${ENCODING}, JSON of what the host receives):`,
      `  full mode   tools/list                              ${fullTokens}`,
      `  search mode tools/list + one search_tools answer    ${searchTokens}  (${(fullTokens / searchTokens).toFixed(1)}x fewer)`,
    );
    phases.lap('count tokens (in the bench)');
    out.push(...(await codeModeJob()));
    phases.lap('code-mode job');
    process.stdout.write(out.join('\n') + '\n');
    return 0;
  } catch (err) {
    throw new Error(`${messageOf(err)}; switchboard's stderr ends:\n${sb.stderrTail()}`, { cause: err });
  } finally {
    await sb.stop();
    rmSync(dir, { recursive: true, force: true });
    rmSync(configDir, { recursive: true, force: true });
    phases.lap('stop');
    process.stderr.write(phases.report());
  }
}

/**
 * Wall time of each phase, switchboard's CPU time in it, and the longest the bench's own event
 * loop (the hosts') was held up in it, printed to stderr: where a slow run spends its time.
 */
function phaseClock(): { cpuOf(pid: number): void; lap(label: string): void; report(): string } {
  const start = performance.now();
  let last = start;
  let pid: number | undefined;
  let cpu = 0;
  const laps: string[] = [];
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  return {
    cpuOf(p) {
      pid = p;
    },
    lap(label) {
      const now = performance.now();
      const stall = (delay.max / 1e6).toFixed(0);
      const used = pid === undefined ? undefined : cpuTimeMs(pid);
      const spent = used === undefined ? '' : `, switchboard CPU ${(used - cpu).toFixed(0)} ms`;
      if (used !== undefined) cpu = used;
      laps.push(
        `  ${(now - last).toFixed(0).padStart(7)} ms  ${label} (bench event-loop stall ${stall} ms${spent})`,
      );
      delay.reset();
      last = now;
    },
    report: () => {
      delay.disable();
      return `phases (wall time):\n${laps.join('\n')}\n  ${(performance.now() - start).toFixed(0).padStart(7)} ms  total\n`;
    },
  };
}
async function connect(url: string): Promise<Client> {
  const c = new Client({ name: 'catalog-bench', version: '1.0.0' });
  await c.connect(new StreamableHTTPClientTransport(new URL(url)));
  return c;
}

async function quality(
  c: Client,
  tasks: { task: string; server: string; tool: string }[],
  names: Set<string>,
): Promise<Quality> {
  let r1 = 0;
  let r5 = 0;
  let rr = 0;
  let n = 0;
  const missing: string[] = [];
  for (const t of tasks) {
    const want = `${t.server}_${t.tool}`;
    if (!names.has(want)) {
      missing.push(want);
      continue;
    }
    n++;
    const answer = await c.callTool({ name: 'search_tools', arguments: { query: t.task, limit: 10 } });
    const got = ((answer.structuredContent as { tools: { name: string }[] }).tools ?? []).map((x) => x.name);
    const rank = got.indexOf(want);
    if (rank === 0) r1++;
    if (rank >= 0 && rank < 5) r5++;
    if (rank >= 0) rr += 1 / (rank + 1);
    if (process.env.CATALOG_BENCH_VERBOSE && rank !== 0)
      process.stderr.write(`miss(${rank}) ${want} <- "${t.task}": ${got.slice(0, 3).join(', ')}\n`);
  }
  return { tasks: n, missing, recall1: r1 / (n || 1), recall5: r5 / (n || 1), mrr: rr / (n || 1) };
}
