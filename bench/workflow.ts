// Workflow scenario: one call of a 10-step sequential workflow of bench.echo handler steps over
// the bridge, against the same 10 bench.echo calls made one after another over the bridge, both
// on the same kind of gateway (audit on, a fresh state file). What the engine adds to the steps.
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

const STEPS = 10;
const TEXT = 'hello from the switchboard benchmark';

async function openWithWorkflow(): Promise<Endpoint<BridgeClient>> {
  const saved = {
    state: process.env.SWITCHBOARD_BENCH_STATE_PATH,
    workflow: process.env.SWITCHBOARD_BENCH_WORKFLOW,
  };
  process.env.SWITCHBOARD_BENCH_STATE_PATH = join(
    mkdtempSync(join(tmpdir(), 'switchboard-bench-state-')),
    'state.sqlite',
  );
  process.env.SWITCHBOARD_BENCH_WORKFLOW = 'on';
  try {
    return await openGatewayAudited(true);
  } finally {
    restoreEnv('SWITCHBOARD_BENCH_STATE_PATH', saved.state);
    restoreEnv('SWITCHBOARD_BENCH_WORKFLOW', saved.workflow);
  }
}

/** Ten handler calls in a row, each passing the last one's answer on, as the workflow does. */
function directCalls(client: BridgeClient): Call {
  return async () => {
    let text = TEXT;
    for (let i = 0; i < STEPS; i++) {
      const result = await client.request<{ text?: unknown }>('bench.echo', { text });
      if (result.text !== text) throw new Error(`bench.echo answered ${JSON.stringify(result)}`);
      text = result.text;
    }
  };
}

function workflowCall(client: BridgeClient): Call {
  return async () => {
    const result = await client.request<{ structuredContent?: { text?: unknown }; isError?: unknown }>(
      'tools/call',
      { name: 'workflows_ten', arguments: { text: TEXT } },
    );
    if (result.isError === true || result.structuredContent?.text !== TEXT)
      throw new Error(`workflows_ten answered ${JSON.stringify(result)}`);
  };
}

const baselines = new WeakSet<BridgeClient>();

async function openBaseline(): Promise<Endpoint<BridgeClient>> {
  const endpoint = await openWithWorkflow();
  baselines.add(endpoint.client);
  return endpoint;
}

const ready = async (endpoint: Endpoint<BridgeClient>): Promise<void> => {
  await directCalls(endpoint.client)();
  endpoint.noteChildren();
};

const workflow: Scenario<BridgeClient> = {
  name: 'workflow',
  summary: `one ${STEPS}-step sequential workflow of handler calls vs the same ${STEPS} calls made over the bridge (target p50 <= 1.5x)`,
  baseline: { name: 'bridge-10-calls', gateway: true, open: openBaseline, ready },
  subject: { name: 'workflow-10-steps', gateway: true, open: openWithWorkflow, ready },
  // Each call is ten steps: a tenth of the calls keeps a run about as long as the others'.
  plan: (sizes) => ({
    warmup: Math.ceil(sizes.warmup / STEPS),
    calls: Math.ceil(sizes.calls / STEPS),
    throughputCalls: Math.ceil(sizes.calls / STEPS),
    rounds: sizes.rounds,
  }),
  call: (client) => (baselines.has(client) ? directCalls(client) : workflowCall(client)),
  settle: async (client) => void (await client.request('bench.settle', {})),
  rows: (baseline: Measurement, subject: Measurement | undefined): Row[] =>
    rowsOf(baseline, subject, { label: 'workflow', p50: 1.5 }),
};

export const WORKFLOW_SCENARIOS: readonly Scenario<unknown>[] = [workflow as Scenario<unknown>];
