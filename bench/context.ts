// Context store scenario: context.put and context.get on one bridge connection, audit on, against
// the bench.echo handler on the same kind of connection (what any handler call costs).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { BridgeClient } from '../src/public/bridge-client/index.js';
import type { Measurement } from './lib/compare.js';
import type { Endpoint } from './lib/endpoints.js';
import type { Row } from './lib/report.js';
import type { Call } from './lib/runners.js';
import { openGatewayAudited, restoreEnv } from './bridge.js';
import { rowsOf, type Scenario } from './scenarios.js';

/** Context operations per second on one connection (half puts, half gets), audit on. */
const TARGET = 20_000;
/** Calls at 32 in flight per sequential call measured (see `plan`). */
const THROUGHPUT_FACTOR = 10;
const ARGS = { text: 'hello from the switchboard benchmark' };
/** The bench's bridge identity is `caller`: its own scope needs no grant. */
const SCOPE = 'server:caller';

async function openWithState(): Promise<Endpoint<BridgeClient>> {
  const saved = process.env.SWITCHBOARD_BENCH_STATE_PATH;
  process.env.SWITCHBOARD_BENCH_STATE_PATH = join(
    mkdtempSync(join(tmpdir(), 'switchboard-bench-state-')),
    'state.sqlite',
  );
  try {
    return await openGatewayAudited(true);
  } finally {
    restoreEnv('SWITCHBOARD_BENCH_STATE_PATH', saved);
  }
}

function echoCall(client: BridgeClient): Call {
  return async () => {
    const result = await client.request<{ text?: unknown }>('bench.echo', ARGS);
    if (result.text !== ARGS.text) throw new Error(`bench.echo answered ${JSON.stringify(result)}`);
  };
}

/** Alternates a put and a get of one of 100 keys: both paths, a realistic working set. */
function contextCall(client: BridgeClient): Call {
  let n = 0;
  return async () => {
    const key = `k${n % 100}`;
    if (n++ % 2 === 0) {
      await client.request('context.put', { scope: SCOPE, key, value: { n, text: ARGS.text } });
    } else {
      const got = await client.request<{ version?: unknown }>('context.get', { scope: SCOPE, key });
      if (typeof got.version !== 'number') throw new Error(`context.get answered ${JSON.stringify(got)}`);
    }
  };
}

/** The baseline's clients: the runner hands each side's client to one `call`. */
const baselines = new WeakSet<BridgeClient>();

async function openBaseline(): Promise<Endpoint<BridgeClient>> {
  const endpoint = await openWithState();
  baselines.add(endpoint.client);
  return endpoint;
}

const ready = async (endpoint: Endpoint<BridgeClient>): Promise<void> => {
  await echoCall(endpoint.client)();
  endpoint.noteChildren();
};

const context: Scenario<BridgeClient> = {
  name: 'context',
  summary:
    'context.put/get on one bridge connection with audit on vs the bench.echo handler (audit on): what the store adds to a handler call',
  baseline: { name: 'bridge-echo-audited', gateway: true, open: openBaseline, ready },
  subject: { name: 'context-put-get', gateway: true, open: openWithState, ready },
  plan: (sizes) => ({
    warmup: sizes.warmup,
    calls: sizes.calls,
    // Each throughput slice ends by waiting for its audit records to commit (settle). A slice
    // must be long against that wait and the audit's 20 ms batch window, or it measures the drain
    // rather than the rate: at the default sizes, 5,000 calls a slice (about a quarter second).
    throughputCalls: sizes.calls * THROUGHPUT_FACTOR,
    rounds: sizes.rounds,
  }),
  call: (client) => (baselines.has(client) ? echoCall(client) : contextCall(client)),
  settle: async (client) => void (await client.request('bench.settle', {})),
  rows: (baseline: Measurement, subject: Measurement | undefined): Row[] => {
    const rows = rowsOf(baseline, subject, { label: 'context' });
    const perSecond = subject?.throughput?.callsPerSecond;
    if (subject !== undefined && perSecond !== undefined)
      rows.push({
        scenario: subject.name,
        metric: 'throughput (absolute)',
        value: perSecond,
        unit: 'ops/s',
        baseline: { name: 'target', value: TARGET },
        goal: { op: '>=', ratio: 1 },
      });
    return rows;
  },
};

export const CONTEXT_SCENARIOS: readonly Scenario<unknown>[] = [context as Scenario<unknown>];
