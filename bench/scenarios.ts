// The benchmark scenarios: each pairs a direct baseline with the same workload through switchboard.
import type { Client } from '@modelcontextprotocol/client';

import type { Measurement, Plan } from './lib/compare.js';
import { openHttp, openStdio, type Endpoint, type Era } from './lib/endpoints.js';
import { gatewayArgs, writeGatewayConfig } from './lib/gateway.js';
import { ECHO_SERVER, HTTP_RELAY, JSON_PROXY, PIPE_PROXY } from './lib/paths.js';
import type { Goal, Row } from './lib/report.js';
import type { Call } from './lib/runners.js';

export interface Sizes {
  /** Timed sequential calls per target (and as many again at 32 in flight). */
  readonly calls: number;
  readonly warmup: number;
  readonly rounds: number;
}

export interface Side<C = Client> {
  /** The name on the command line and in the table. */
  readonly name: string;
  /** Needs `dist/src/cli/main.js`. */
  readonly gateway: boolean;
  open(): Promise<Endpoint<C>>;
  /** Checks the endpoint answers correctly (and waits for a gateway's catalog to fill) before timing. */
  ready(endpoint: Endpoint<C>): Promise<void>;
}

export interface Scenario<C = Client> {
  readonly name: string;
  readonly summary: string;
  readonly baseline: Side<C>;
  readonly subject: Side<C>;
  plan(sizes: Sizes): Plan;
  call(client: C): Call;
  /**
   * Awaited at the end of each timed concurrent slice, inside its time: waits for work the calls
   * left running after their replies (audit records still being written), so that work is charged
   * to the side that caused it rather than to whichever side runs next.
   */
  settle?(client: C): Promise<void>;
  rows(baseline: Measurement, subject: Measurement | undefined): Row[];
}

const CALL_TIMEOUT_MS = 30_000;
const CONNECT_TIMEOUT_MS = 60_000;
// 100 node processes starting at once on a small shared machine take a while.
const CATALOG_STARTUP_MS = 300_000;
const CATALOG_BACKENDS = 100;
const TOOLS_PER_BACKEND = 20;
const CATALOG_TOOLS = CATALOG_BACKENDS * TOOLS_PER_BACKEND;

const ECHO_ARGS = { text: 'hello from the switchboard benchmark' };

export function echoCall(client: Client): Call {
  return async () => {
    const result = await client.callTool(
      { name: 'echo', arguments: ECHO_ARGS },
      { timeout: CALL_TIMEOUT_MS },
    );
    if (result.isError === true) throw new Error(`echo failed: ${JSON.stringify(result.content)}`);
  };
}

export async function echoAnswers(endpoint: Endpoint): Promise<void> {
  const result = await endpoint.client.callTool(
    { name: 'echo', arguments: ECHO_ARGS },
    { timeout: CALL_TIMEOUT_MS },
  );
  const [first] = result.content as { type: string; text?: string }[];
  if (first?.type !== 'text' || first.text !== ECHO_ARGS.text) {
    throw new Error(`echo answered ${JSON.stringify(result)} instead of its argument`);
  }
  endpoint.noteChildren();
}

export function echoPlan(sizes: Sizes): Plan {
  return { warmup: sizes.warmup, calls: sizes.calls, throughputCalls: sizes.calls, rounds: sizes.rounds };
}

const node = process.execPath;

export interface Goals {
  readonly p50?: number;
  readonly throughput?: number;
  readonly cpu?: number;
  /** CPU per call in ms, absolute: a budget on this kind of machine rather than a ratio. */
  readonly cpuMs?: number;
  /** What the subject's own rows call it (default: switchboard). */
  readonly label?: string;
  /** What the baseline's CPU row calls the process it charges (default: server). */
  readonly baselineLabel?: string;
}

interface Metric {
  readonly name: (gateway: boolean) => string;
  readonly unit: string;
  readonly pick: (m: Measurement) => number | undefined;
  readonly goal?: Goal | undefined;
}

/**
 * One scenario's rows: latency, throughput (when measured), CPU per call of the charged process
 * and the gateway's peak RSS. Every switchboard row carries its baseline's figure, so its ratio
 * comes from two numbers taken in the same run.
 */
export function rowsOf(
  baseline: Measurement,
  subject: Measurement | undefined,
  goals: Goals,
  per = 'call',
): Row[] {
  const goal = (op: Goal['op'], ratio: number | undefined): Goal | undefined =>
    ratio === undefined ? undefined : { op, ratio };
  const metrics: Metric[] = [
    { name: () => 'p50', unit: 'ms', pick: (m) => m.latency.p50Ms, goal: goal('<=', goals.p50) },
    { name: () => 'p99', unit: 'ms', pick: (m) => m.latency.p99Ms },
    {
      name: () => 'throughput',
      unit: 'calls/s',
      pick: (m) => m.throughput?.callsPerSecond,
      goal: goal('>=', goals.throughput),
    },
    {
      name: (gateway) =>
        `${gateway ? (goals.label ?? 'switchboard') : (goals.baselineLabel ?? 'server')} CPU/${per}`,
      unit: 'ms',
      pick: (m) => m.cpuMsPerCall,
      goal: goals.cpuMs === undefined ? goal('<=', goals.cpu) : { op: '<=', value: goals.cpuMs },
    },
    // BENCH_PATH: how long the process in the middle held each message (path-time.ts).
    { name: () => 'request held p50', unit: 'µs', pick: (m) => m.path?.request.p50Us },
    { name: () => 'response held p50', unit: 'µs', pick: (m) => m.path?.response.p50Us },
    { name: () => 'request write p50', unit: 'µs', pick: (m) => m.path?.request.write.p50Us },
    { name: () => 'response write p50', unit: 'µs', pick: (m) => m.path?.response.write.p50Us },
    { name: () => 'busy after request p50', unit: 'µs', pick: (m) => m.path?.request.after.p50Us },
    { name: () => 'busy after response p50', unit: 'µs', pick: (m) => m.path?.response.after.p50Us },
  ];
  const rows: Row[] = [];
  for (const m of subject === undefined ? [baseline] : [baseline, subject]) {
    const gateway = m === subject;
    for (const metric of metrics) {
      const value = metric.pick(m);
      if (value === undefined) continue;
      const base = gateway ? metric.pick(baseline) : undefined;
      rows.push({
        scenario: m.name,
        metric: metric.name(gateway),
        value,
        unit: metric.unit,
        ...(base !== undefined && { baseline: { name: baseline.name, value: base } }),
        ...(base !== undefined && metric.goal !== undefined && { goal: metric.goal }),
      });
    }
    if (gateway && m.youngKiBPerCall !== undefined) {
      const who = goals.label ?? 'switchboard';
      rows.push(
        { scenario: m.name, metric: `${who} young alloc/${per}`, value: m.youngKiBPerCall, unit: 'KiB' },
        { scenario: m.name, metric: `${who} promoted/${per}`, value: m.promotedKiBPerCall!, unit: 'KiB' },
        { scenario: m.name, metric: `${who} full GCs/10k ${per}s`, value: m.fullGcsPer10k!, unit: '' },
      );
    }
    if (gateway && m.peakRssMiB !== undefined) {
      rows.push({
        scenario: m.name,
        metric: `${goals.label ?? 'switchboard'} peak RSS`,
        value: m.peakRssMiB,
        unit: 'MiB',
      });
    }
  }
  return rows;
}

const stdio: Scenario = {
  name: 'stdio',
  summary: 'echo tool calls over stdio: direct vs host→switchboard (stdio) → echo backend (stdio)',
  baseline: {
    name: 'direct-stdio',
    gateway: false,
    open: () => openStdio('echo-server (stdio)', node, [ECHO_SERVER, '--stdio'], CONNECT_TIMEOUT_MS),
    ready: echoAnswers,
  },
  subject: {
    name: 'switchboard-stdio',
    gateway: true,
    open: () => {
      // One backend: no name prefix is added, so the tool is still `echo`. Both ends legacy.
      const config = writeGatewayConfig([{ name: 'echo', args: ['--stdio'], era: 'legacy' }]);
      return openStdio('switchboard (stdio front)', node, gatewayArgs(config, 'stdio'), CONNECT_TIMEOUT_MS);
    },
    ready: echoAnswers,
  },
  plan: echoPlan,
  call: echoCall,
  rows: (baseline, subject) => rowsOf(baseline, subject, { p50: 1.3, throughput: 0.8 }),
};

/**
 * What one extra Node process costs before any proxy logic: a pipe-through proxy that parses
 * nothing. Read next to `stdio`, it separates the cost of the hop from the cost of switchboard.
 */
const stdioFloor: Scenario = {
  name: 'stdio-floor',
  summary: 'echo tool calls over stdio: direct vs through a Node process that only pipes bytes (no parsing)',
  baseline: stdio.baseline,
  subject: {
    name: 'pipe-proxy',
    gateway: false,
    open: () => openStdio('pipe proxy (stdio)', node, [PIPE_PROXY], CONNECT_TIMEOUT_MS),
    ready: echoAnswers,
  },
  plan: echoPlan,
  call: echoCall,
  rows: (baseline, subject) => rowsOf(baseline, subject, { label: 'proxy' }),
};

/**
 * The stdio target read against its floor in one run: the pipe-through proxy is the baseline and
 * switchboard's stdio front takes its place, so the ratio is what switchboard's own work (parsing,
 * the pipeline, audit) adds to a call that already pays for an extra process.
 */
const stdioOverPipe: Scenario = {
  name: 'stdio-pipe',
  summary: 'echo tool calls over stdio: the pipe-through proxy vs switchboard (stdio front) in its place',
  baseline: stdioFloor.subject,
  subject: stdio.subject,
  plan: echoPlan,
  call: echoCall,
  rows: (baseline, subject) =>
    rowsOf(baseline, subject, { p50: 1.2, throughput: 0.8, baselineLabel: 'proxy' }),
};

/**
 * What reading each message costs over piping it: a process that parses every line and writes it
 * out again (bench/fixtures/json-proxy.ts) in the pipe-through proxy's place. Any proxy that
 * applies a rule to a call pays at least this; read `stdio-pipe` against it.
 */
const stdioJsonFloor: Scenario = {
  name: 'stdio-json-floor',
  summary:
    'echo tool calls over stdio: the pipe-through proxy vs a proxy that parses and re-serialises each message',
  baseline: stdioFloor.subject,
  subject: {
    name: 'json-proxy',
    gateway: false,
    open: () => openStdio('JSON proxy (stdio)', node, [JSON_PROXY], CONNECT_TIMEOUT_MS),
    ready: echoAnswers,
  },
  plan: echoPlan,
  call: echoCall,
  rows: (baseline, subject) => rowsOf(baseline, subject, { label: 'proxy', baselineLabel: 'proxy' }),
};

const http: Scenario = {
  name: 'http',
  summary: 'echo tool calls over Streamable HTTP: direct vs host→switchboard (HTTP) → echo backend (stdio)',
  baseline: {
    name: 'direct-http',
    gateway: false,
    open: () => openHttp('echo-server (http)', node, [ECHO_SERVER, '--http', '0'], CONNECT_TIMEOUT_MS),
    ready: echoAnswers,
  },
  subject: {
    name: 'switchboard-http',
    gateway: true,
    open: () => {
      const config = writeGatewayConfig([{ name: 'echo', args: ['--stdio'], era: 'legacy' }]);
      return openHttp('switchboard (http front)', node, gatewayArgs(config, 'http'), CONNECT_TIMEOUT_MS);
    },
    ready: echoAnswers,
  },
  plan: echoPlan,
  call: echoCall,
  rows: (baseline, subject) => rowsOf(baseline, subject, { p50: 0.9, cpuMs: 0.15 }),
};

/**
 * What serving Streamable HTTP in Node and relaying to a stdio backend costs before any gateway
 * work: one process on node:http that answers each POST as JSON and relays it to the echo server.
 * Read next to `http`, its CPU per call is the floor under switchboard's HTTP front.
 */
const httpFloor: Scenario = {
  name: 'http-floor',
  summary:
    'echo tool calls over Streamable HTTP: direct vs through a bare node:http process relaying to the echo server over stdio',
  baseline: http.baseline,
  subject: {
    name: 'http-relay',
    gateway: false,
    open: () => openHttp('http relay', node, [HTTP_RELAY], CONNECT_TIMEOUT_MS),
    ready: echoAnswers,
  },
  plan: echoPlan,
  call: echoCall,
  rows: (baseline, subject) => rowsOf(baseline, subject, { label: 'relay' }),
};

function listCall(client: Client): Call {
  return async () => {
    // 'bypass': every listing goes over the wire, never to the client's own cache.
    await client.listTools(undefined, { cacheMode: 'bypass', timeout: CALL_TIMEOUT_MS });
  };
}

/** Waits until the listing holds the whole catalog (a gateway may still be starting backends). */
async function catalogComplete(endpoint: Endpoint): Promise<void> {
  const deadline = Date.now() + CATALOG_STARTUP_MS;
  for (;;) {
    const { tools } = await endpoint.client.listTools(undefined, {
      cacheMode: 'bypass',
      timeout: CALL_TIMEOUT_MS,
    });
    const unique = new Set(tools.map((tool) => tool.name)).size;
    if (tools.length === CATALOG_TOOLS && unique === CATALOG_TOOLS) break;
    if (tools.length > CATALOG_TOOLS || unique !== tools.length) {
      throw new Error(
        `catalog lists ${tools.length} tools (${unique} distinct names), expected ${CATALOG_TOOLS}`,
      );
    }
    if (Date.now() > deadline) {
      throw new Error(
        `catalog still lists ${tools.length} of ${CATALOG_TOOLS} tools after ${CATALOG_STARTUP_MS} ms`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  endpoint.noteChildren();
}

const catalog: Scenario = {
  name: 'catalog',
  summary: `tools/list of ${CATALOG_TOOLS} tools: one server vs switchboard fronting ${CATALOG_BACKENDS} × ${TOOLS_PER_BACKEND}`,
  baseline: {
    name: 'catalog-direct',
    gateway: false,
    open: () =>
      openStdio(
        'echo-server (catalog)',
        node,
        [ECHO_SERVER, '--stdio', '--tools', String(CATALOG_TOOLS), '--no-echo'],
        CONNECT_TIMEOUT_MS,
      ),
    ready: catalogComplete,
  },
  subject: {
    name: 'catalog-switchboard',
    gateway: true,
    open: () => {
      const backends = Array.from({ length: CATALOG_BACKENDS }, (_, i) => ({
        name: `b${String(i).padStart(3, '0')}`,
        args: ['--stdio', '--tools', String(TOOLS_PER_BACKEND), '--no-echo'],
      }));
      const config = writeGatewayConfig(backends, { limits: { startupTimeoutMs: CATALOG_STARTUP_MS } });
      return openStdio('switchboard (catalog)', node, gatewayArgs(config, 'stdio'), CATALOG_STARTUP_MS);
    },
    ready: catalogComplete,
  },
  // A listing of 2,000 tools costs ~100× an echo call: scale the counts down to keep the run short.
  plan: (sizes) => ({
    warmup: Math.max(5, Math.round(sizes.warmup / 20)),
    calls: Math.max(20, Math.round(sizes.calls / 20)),
    throughputCalls: 0,
    rounds: sizes.rounds,
  }),
  call: listCall,
  rows: (baseline, subject) => rowsOf(baseline, subject, { p50: 1.5 }, 'listing'),
};

/** An echo endpoint over the given front, speaking the given era: the echo server, or switchboard. */
export function echoSide(
  name: string,
  label: string,
  front: 'stdio' | 'http',
  era: Era,
  args: () => string[],
  gateway: boolean,
): Side {
  return {
    name,
    gateway,
    open: () =>
      front === 'stdio'
        ? openStdio(label, node, args(), CONNECT_TIMEOUT_MS, era)
        : openHttp(label, node, args(), CONNECT_TIMEOUT_MS, era),
    ready: echoAnswers,
  };
}

const echoServerArgs = {
  stdio: () => [ECHO_SERVER, '--stdio'],
  http: () => [ECHO_SERVER, '--http', '0'],
};

/** Switchboard fronting the echo server (spawned over stdio), spoken to in `backendEra`. */
function switchboardArgs(front: 'stdio' | 'http', backendEra: Era): () => string[] {
  return () => gatewayArgs(writeGatewayConfig([{ name: 'echo', args: ['--stdio'], era: backendEra }]), front);
}

/** The modern era (2026-07-28) end to end: a modern host, switchboard, a backend spoken to as modern. */
function modernScenario(front: 'stdio' | 'http'): Scenario {
  return {
    name: `modern-${front}`,
    summary: `echo tool calls, 2026-07-28 host over ${front}: direct vs host→switchboard (${front}) → echo backend (modern, stdio)`,
    baseline: echoSide(
      `direct-modern-${front}`,
      `echo-server (modern ${front})`,
      front,
      'modern',
      echoServerArgs[front],
      false,
    ),
    subject: echoSide(
      `switchboard-modern-${front}`,
      `switchboard (modern, ${front})`,
      front,
      'modern',
      switchboardArgs(front, 'modern'),
      true,
    ),
    plan: echoPlan,
    call: echoCall,
    // The HTTP front's CPU budget holds in both eras.
    rows: (baseline, subject) =>
      rowsOf(baseline, subject, front === 'http' ? { p50: 1.3, cpuMs: 0.15 } : { p50: 1.3 }),
  };
}

/** A legacy host calling a modern backend: switchboard translates; the baseline is the host's own era. */
const crossEra: Scenario = {
  name: 'cross-era',
  summary:
    'echo tool calls, 2025-11-25 host over stdio: direct (legacy) vs host→switchboard → echo backend spoken to as modern',
  baseline: stdio.baseline,
  subject: echoSide(
    'switchboard-cross-era',
    'switchboard (cross-era)',
    'stdio',
    'legacy',
    switchboardArgs('stdio', 'modern'),
    true,
  ),
  plan: echoPlan,
  call: echoCall,
  rows: (baseline, subject) => rowsOf(baseline, subject, { p50: 1.3 }),
};

const POLICY_RULES = 100;

/**
 * 100 rules of which only the last decides the echo call: every third one names `echo` with an
 * argument condition the call does not meet (so its condition is evaluated), the rest name other
 * tools. All apply to hosts, so none is skipped by caller before the target is judged.
 */
function policyRules(): object[] {
  const rules: object[] = [];
  for (let i = 0; i < POLICY_RULES - 1; i++) {
    rules.push(
      i % 3 === 0
        ? {
            name: `r${i}`,
            callers: ['host:*'],
            tools: ['echo'],
            when: { path: { prefix: `/forbidden/${i}` } },
            effect: 'deny',
          }
        : { name: `r${i}`, callers: ['host:*'], backends: ['echo'], tools: [`tool_${i}_*`], effect: 'deny' },
    );
  }
  rules.push({ name: 'last', callers: ['host:*'], tools: ['echo'], effect: 'allow' });
  return rules;
}

/** Policy evaluation: switchboard against itself, the same call with 100 rules and with none. */
const policy: Scenario = {
  name: 'policy',
  summary: `echo tool calls over stdio through switchboard: no policy rules vs ${POLICY_RULES} rules, only the last matching`,
  baseline: echoSide(
    'policy-none',
    'switchboard (no rules)',
    'stdio',
    'legacy',
    () => gatewayArgs(writeGatewayConfig([{ name: 'echo', args: ['--stdio'] }]), 'stdio'),
    true,
  ),
  subject: echoSide(
    `policy-${POLICY_RULES}-rules`,
    `switchboard (${POLICY_RULES} rules)`,
    'stdio',
    'legacy',
    () =>
      gatewayArgs(
        writeGatewayConfig([{ name: 'echo', args: ['--stdio'] }], { policy: { rules: policyRules() } }),
        'stdio',
      ),
    true,
  ),
  plan: echoPlan,
  call: echoCall,
  rows: (baseline, subject) => rowsOf(baseline, subject, { p50: 1.1 }),
};

export const SCENARIOS: readonly Scenario[] = [
  stdio,
  stdioFloor,
  stdioOverPipe,
  stdioJsonFloor,
  http,
  httpFloor,
  catalog,
  modernScenario('stdio'),
  modernScenario('http'),
  crossEra,
  policy,
];
