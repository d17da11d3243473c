// `npm run bench -- soak`: mixed traffic from several host sessions through one switchboard for
// minutes while its backends are SIGKILLed at random; counts every call's fate (answered, failed
// with a clear error, or lost: no answer at all) and watches switchboard's memory.
import { readFileSync } from 'node:fs';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

import { gatewayArgs, gatewayMissing, writeGatewayConfig } from './lib/gateway.js';
import { RESULTS_DIR } from './lib/paths.js';
import { descendantsOf, peakRssKiB } from './lib/proc.js';
import { installExitHooks, killEverything, spawnChild, survivors } from './lib/processes.js';
import { writeResults } from './lib/report.js';

export const SOAK_USAGE = `usage: npm run bench -- soak [--duration 3m] [--sessions 4] [--concurrency 4]
                                [--backends 3] [--kill-every 4s]

  --duration D     how long traffic runs: 90s, 3m, 500ms (default 3m)
  --sessions N     host sessions over Streamable HTTP (default 4)
  --concurrency N  calls each session keeps in flight (default 4)
  --backends N     echo backends behind switchboard (default 3)
  --kill-every D   mean time between two SIGKILLs of a random backend child (default 4s)

Exit code 1 when a call was lost (no answer within ${30} s), answered wrongly, or a process outlived the run.`;

interface SoakOptions {
  durationMs: number;
  sessions: number;
  concurrency: number;
  backends: number;
  killEveryMs: number;
}

/** A call not answered in this long is lost: switchboard fails a call within 500 ms of its backend dying. */
const LOST_AFTER_MS = 30_000;
const CONNECT_TIMEOUT_MS = 30_000;
const SAMPLE_EVERY_MS = 1_000;

type Op = 'tools/call' | 'tools/list' | 'resources/read';

interface Tally {
  made: Record<Op, number>;
  ok: number;
  failed: number;
  lost: number;
  wrong: number;
  /** Clear errors by message (numbers and names stripped), most frequent first in the report. */
  errors: Map<string, number>;
}

function parseDuration(text: string | undefined): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text ?? '');
  if (!m) return undefined;
  const n = Number(m[1]);
  return m[2] === 'ms' ? n : m[2] === 'm' ? n * 60_000 : n * 1000;
}

function parseSoakArgs(argv: readonly string[]): SoakOptions | string {
  const o: SoakOptions = {
    durationMs: 180_000,
    sessions: 4,
    concurrency: 4,
    backends: 3,
    killEveryMs: 4_000,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--help' || arg === '-h') return SOAK_USAGE;
    const m = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    const value = m?.[2] ?? argv[++i];
    switch (m?.[1]) {
      case 'duration':
      case 'kill-every': {
        const ms = parseDuration(value);
        if (ms === undefined || ms <= 0) return `${arg}: expected a duration such as 30s, 3m or 500ms`;
        if (m[1] === 'duration') o.durationMs = ms;
        else o.killEveryMs = ms;
        break;
      }
      case 'sessions':
      case 'concurrency':
      case 'backends': {
        const n = Number(value);
        if (!Number.isInteger(n) || n < 1) return `${arg}: expected a whole number ≥ 1`;
        o[m[1]] = n;
        break;
      }
      default:
        return `unknown soak option: ${arg}\n\n${SOAK_USAGE}`;
    }
  }
  return o;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function rssKiB(pid: number): number | undefined {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

function isEchoBackend(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('echo-server');
  } catch {
    return false;
  }
}

/** One call's fate: its own timer decides "lost", so no client-side timeout can pass for an answer. */
async function fate(tally: Tally, op: Op, run: () => Promise<boolean>): Promise<void> {
  tally.made[op]++;
  let timer: NodeJS.Timeout | undefined;
  const lost = new Promise<'lost'>((resolve) => (timer = setTimeout(() => resolve('lost'), LOST_AFTER_MS)));
  try {
    const outcome = await Promise.race([run(), lost]);
    if (outcome === 'lost') tally.lost++;
    else if (outcome) tally.ok++;
    else tally.wrong++;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    const message = err instanceof Error ? err.message : String(err);
    // A clear error is a JSON-RPC error switchboard answered with: a code and a message.
    if (typeof code === 'number' && message) {
      tally.failed++;
      const key = `${code} ${message.replace(/\b[\w-]*\d[\w-]*\b/g, '#')}`.slice(0, 140);
      tally.errors.set(key, (tally.errors.get(key) ?? 0) + 1);
    } else {
      tally.lost++;
      const key = `no answer: ${message}`.slice(0, 140);
      tally.errors.set(key, (tally.errors.get(key) ?? 0) + 1);
    }
  } finally {
    clearTimeout(timer);
  }
}

async function session(
  client: Client,
  o: SoakOptions,
  until: number,
  tally: Tally,
  backends: string[],
): Promise<void> {
  const options = { timeout: LOST_AFTER_MS * 2, cacheMode: 'bypass' as const };
  const worker = async (w: number) => {
    for (let i = 0; Date.now() < until; i++) {
      const backend = backends[Math.floor(Math.random() * backends.length)]!;
      const roll = Math.random();
      if (roll < 0.7) {
        const text = `w${w}-${i}`;
        await fate(tally, 'tools/call', async () => {
          const r = await client.callTool({ name: `${backend}_echo`, arguments: { text } }, options);
          const first = (r.content as { text?: string }[] | undefined)?.[0]?.text;
          if (r.isError) throw Object.assign(new Error(first ?? 'tool error'), { code: 0 });
          return first === text;
        });
      } else if (roll < 0.85) {
        await fate(tally, 'tools/list', async () =>
          Array.isArray((await client.listTools(undefined, options)).tools),
        );
      } else {
        await fate(tally, 'resources/read', async () => {
          const r = await client.readResource({ uri: `${backend}+echo://state` }, options);
          return (r.contents[0] as { text?: string } | undefined)?.text?.startsWith('echo-server') === true;
        });
      }
    }
  };
  await Promise.all(Array.from({ length: o.concurrency }, (_, w) => worker(w)));
}

export async function runSoak(argv: readonly string[]): Promise<number> {
  const o = parseSoakArgs(argv);
  if (typeof o === 'string') {
    const help = o === SOAK_USAGE;
    (help ? console.log : console.error)(o);
    return help ? 0 : 2;
  }
  const missing = gatewayMissing();
  if (missing) {
    console.error(`soak: ${missing}`);
    return 1;
  }
  installExitHooks();
  const names = Array.from({ length: o.backends }, (_, i) => `e${i}`);
  const config = writeGatewayConfig(
    names.map((name) => ({
      name,
      args: ['--stdio', '--resource'],
      // A killed backend is back within a second, so the soak keeps exercising restarts.
      entry: { restart: { initialMs: 100, maxMs: 1000, stableMs: 0 } },
    })),
    { namespacing: { mode: 'always' }, log: { level: 'warn' } },
  );

  const gateway = spawnChild('switchboard (soak)', process.execPath, gatewayArgs(config, 'http'));
  const progress = (m: string) => console.error(`[soak] ${m}`);
  const clients: Client[] = [];
  const tally: Tally = {
    made: { 'tools/call': 0, 'tools/list': 0, 'resources/read': 0 },
    ok: 0,
    failed: 0,
    lost: 0,
    wrong: 0,
    errors: new Map(),
  };
  const samples: { atMs: number; rssKiB: number }[] = [];
  let kills = 0;
  let peak: number | undefined;
  let failure: string | undefined;
  try {
    const [url] = await gateway.waitForStderr(/http:\/\/127\.0\.0\.1:\d+\/mcp\b/, CONNECT_TIMEOUT_MS);
    for (let s = 0; s < o.sessions; s++) {
      const client = new Client({ name: `soak-${s}`, version: '0.1.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(url!)), { timeout: CONNECT_TIMEOUT_MS });
      clients.push(client);
    }
    const started = Date.now();
    const until = started + o.durationMs;
    progress(
      `${o.sessions} sessions × ${o.concurrency} in flight, ${o.backends} backends, a SIGKILL every ~${o.killEveryMs} ms, for ${o.durationMs / 1000} s`,
    );
    const sampler = setInterval(() => {
      const rss = rssKiB(gateway.pid);
      if (rss !== undefined) samples.push({ atMs: Date.now() - started, rssKiB: rss });
    }, SAMPLE_EVERY_MS);
    const killer = (async () => {
      while (Date.now() < until) {
        await sleep(o.killEveryMs * (0.5 + Math.random()));
        if (Date.now() >= until) break;
        const victims = descendantsOf(gateway.pid).filter(isEchoBackend);
        const victim = victims[Math.floor(Math.random() * victims.length)];
        if (victim === undefined) continue;
        try {
          process.kill(victim, 'SIGKILL');
          kills++;
        } catch {
          // It died on its own between the scan and the signal.
        }
      }
    })();
    const reporter = setInterval(
      () =>
        progress(
          `${Math.round((Date.now() - started) / 1000)} s: ${tally.ok + tally.failed + tally.lost + tally.wrong} calls, ${tally.failed} failed, ${tally.lost} lost, ${kills} kills`,
        ),
      15_000,
    );
    await Promise.all([...clients.map((c) => session(c, o, until, tally, names)), killer]);
    clearInterval(sampler);
    clearInterval(reporter);
    peak = peakRssKiB(gateway.pid);
  } catch (err) {
    failure = err instanceof Error ? err.message : String(err);
  } finally {
    for (const c of clients) await c.close().catch(() => undefined);
    await gateway.stop();
  }
  const left = survivors();
  if (left.length) killEverything();

  const windowMs = Math.min(60_000, o.durationMs / 3);
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
  const first = mean(samples.filter((s) => s.atMs <= windowMs).map((s) => s.rssKiB)) / 1024;
  const last = mean(samples.filter((s) => s.atMs >= o.durationMs - windowMs).map((s) => s.rssKiB)) / 1024;
  const made = Object.values(tally.made).reduce((a, b) => a + b, 0);
  const mib = (x: number) => `${x.toFixed(1)} MiB`;
  const w = `${Math.round(windowMs / 1000)} s`;
  const lines = [
    `switchboard soak — ${o.durationMs / 1000} s, ${o.sessions} sessions × ${o.concurrency}, ${o.backends} backends, node ${process.version}`,
    '',
    `calls made            ${made} (tools/call ${tally.made['tools/call']}, tools/list ${tally.made['tools/list']}, resources/read ${tally.made['resources/read']})`,
    `answered              ${tally.ok}`,
    `failed, clear error   ${tally.failed}`,
    `lost (no answer)      ${tally.lost}${tally.lost ? '   <- must be 0' : ''}`,
    `wrong answers         ${tally.wrong}${tally.wrong ? '   <- must be 0' : ''}`,
    `backend SIGKILLs      ${kills}`,
    `peak RSS              ${peak === undefined ? 'n/a' : mib(peak / 1024)}`,
    `RSS first ${w}        ${mib(first)}`,
    `RSS last ${w}         ${mib(last)}`,
    `RSS growth            ${mib(last - first)} (${(((last - first) / first) * 100).toFixed(1)}%)`,
  ];
  const errors = [...tally.errors].sort((a, b) => b[1] - a[1]).slice(0, 8);
  if (errors.length)
    lines.push('', 'errors seen (most frequent first):', ...errors.map(([m, n]) => `  ${n}× ${m}`));
  if (failure) lines.push('', `soak failed to run: ${failure}`, gateway.stderrTail());
  if (left.length) lines.push('', `processes outlived the soak (now killed): ${left.join(', ')}`);
  console.log(lines.join('\n'));
  const path = writeResults(RESULTS_DIR, {
    scenario: 'soak',
    options: o,
    calls: {
      made,
      byOp: tally.made,
      ok: tally.ok,
      failed: tally.failed,
      lost: tally.lost,
      wrong: tally.wrong,
    },
    errors: Object.fromEntries(tally.errors),
    kills,
    rss: { peakKiB: peak, firstWindowMiB: first, lastWindowMiB: last, windowMs, samples },
  });
  console.log(`\nresults: ${path}`);
  return failure || tally.lost || tally.wrong || left.length ? 1 : 0;
}
