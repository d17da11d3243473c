// What metrics cost per call: switchboard over stdio with the admin listener and metrics off (the
// baseline) against the same switchboard with them on (every call then publishes call:start/end
// and stage:end, counted into prom-client), in the same run. Target: at most 5% more p50.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStdio } from './lib/endpoints.js';
import { gatewayArgs, writeGatewayConfig } from './lib/gateway.js';
import { rowsOf, SCENARIOS, type Scenario } from './scenarios.js';

const CONNECT_TIMEOUT_MS = 60_000;
const stdio = SCENARIOS.find((s) => s.name === 'stdio')!;

function switchboardWith(name: string, admin: Record<string, unknown>): Scenario['subject'] {
  return {
    name,
    gateway: true,
    open: () => {
      const config = writeGatewayConfig([{ name: 'echo', args: ['--stdio'], era: 'legacy' }], { admin });
      return openStdio(
        `switchboard (${name})`,
        process.execPath,
        gatewayArgs(config, 'stdio'),
        CONNECT_TIMEOUT_MS,
      );
    },
    ready: stdio.subject.ready,
  };
}

const metrics: Scenario = {
  name: 'metrics',
  summary: 'echo tool calls through switchboard (stdio): metrics and admin listener off vs on',
  baseline: switchboardWith('metrics-off', { enabled: false }),
  subject: switchboardWith('metrics-on', {
    enabled: true,
    port: 0,
    stateDir: mkdtempSync(join(tmpdir(), 'switchboard-bench-admin-')),
  }),
  plan: stdio.plan,
  call: stdio.call,
  rows: (baseline, subject) => rowsOf(baseline, subject, { p50: 1.05, label: 'metrics-on' }),
};

export const METRICS_SCENARIOS: readonly Scenario[] = [metrics];
