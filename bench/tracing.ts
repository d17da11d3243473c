// Tracing scenario: the cost of traces on the request path. Switchboard against itself, the same
// echo tool call over stdio with tracing off and with tracing on, exporting every span over
// OTLP/HTTP to a local receiver that discards them (started by this process).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import { openStdio } from './lib/endpoints.js';
import { gatewayArgs, writeGatewayConfig } from './lib/gateway.js';
import { echoAnswers, echoCall, echoPlan, echoSide, rowsOf, type Scenario } from './scenarios.js';

const CONNECT_TIMEOUT_MS = 60_000;
const ECHO = [{ name: 'echo', args: ['--stdio'], era: 'legacy' as const }];

let sinkUrl: Promise<string> | undefined;

/** An OTLP/HTTP traces receiver that reads each export and answers 200: the collector's cost, not ours. */
function discardingSink(): Promise<string> {
  return (sinkUrl ??= new Promise((resolve) => {
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    });
    server.listen(0, '127.0.0.1', () => {
      server.unref();
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`);
    });
  }));
}

const tracing: Scenario = {
  name: 'tracing',
  summary:
    'echo tool calls over stdio through switchboard: tracing off vs on (every call sampled, spans exported to a local OTLP/HTTP receiver)',
  baseline: echoSide(
    'tracing-off',
    'switchboard (tracing off)',
    'stdio',
    'legacy',
    () => gatewayArgs(writeGatewayConfig(ECHO), 'stdio'),
    true,
  ),
  subject: {
    name: 'tracing-on',
    gateway: true,
    open: async () => {
      const endpoint = await discardingSink();
      const config = writeGatewayConfig(ECHO, { tracing: { enabled: true, endpoint, sampleRatio: 1 } });
      return openStdio(
        'switchboard (tracing on)',
        process.execPath,
        gatewayArgs(config, 'stdio'),
        CONNECT_TIMEOUT_MS,
      );
    },
    ready: echoAnswers,
  },
  plan: echoPlan,
  call: echoCall,
  rows: (baseline, subject) => rowsOf(baseline, subject, { p50: 1.15 }),
};

export const TRACING_SCENARIOS: readonly Scenario[] = [tracing];
