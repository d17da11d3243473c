// What the conformance suite is pointed at: the fixture itself, or switchboard fronting the fixture over stdio or HTTP.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { stringify } from 'yaml';

import { projectRoot } from './node22.js';
import { startChild } from './processes.js';

/** A wire generation: `legacy` is 2025-11-25 (initialize, sessions), `modern` is 2026-07-28 (stateless). */
export type Era = 'legacy' | 'modern';

/**
 * What the fixture serves in a target: one era, or `dual` — both eras (`--era both`), with the
 * 2025-11-25 sampling and elicitation tools asking the legacy way (`--ask-legacy`), as a server
 * built with the v2 SDK for 2025 hosts does. Behind switchboard it gets no `era`: what it speaks
 * is found out, and each host must be served in its own era.
 */
export type FixtureKind = Era | 'dual';

export type TargetName =
  | 'direct-legacy'
  | 'direct-modern'
  | 'gateway-stdio'
  | 'gateway-http'
  | 'gateway-stdio-modern'
  | 'gateway-http-modern'
  | 'gateway-stdio-dual'
  | 'gateway-http-dual';

export interface StartOptions {
  /** Copy the children's stderr to ours as it arrives. */
  verbose: boolean;
  /** The era the suite will speak (its requirement set's): the readiness probe speaks it too. */
  hostEra: Era;
}

export interface Target {
  readonly name: TargetName;
  readonly description: string;
  /**
   * The era the fixture serves in this target (`--era`): a backend of one era only, so era mixing
   * is visible; or `dual`, a backend of both eras that switchboard must speak to in each host's.
   */
  readonly fixtureEra: FixtureKind;
  /** How switchboard reaches the fixture; undefined when the suite talks to the fixture itself. */
  readonly backend: 'stdio' | 'http' | undefined;
  /** Starts every process the target needs and resolves with the MCP URL once it serves the fixture's tools. */
  start(workDir: string, options: StartOptions): Promise<string>;
}

const STARTUP_TIMEOUT_MS = 30_000;
const MODERN_VERSION = '2026-07-28';
// A tool every requirement set calls: when the URL lists it, the fixture is reachable through it.
const PROBE_TOOL = 'test_simple_text';

const fixtureScript = (): string => join(projectRoot(), 'dist', 'test', 'fixtures', 'conformance-server.js');
const gatewayScript = (): string => join(projectRoot(), 'dist', 'src', 'cli', 'main.js');

function direct(fixtureEra: Era): Target {
  return {
    name: `direct-${fixtureEra}`,
    description: `the ${fixtureEra} fixture over Streamable HTTP, no gateway (proves the fixture)`,
    fixtureEra,
    backend: undefined,
    start: async (_workDir, options) => {
      const url = await startFixtureHttp(fixtureEra, options);
      await waitForTool(url, options.hostEra);
      return url;
    },
  };
}

function gateway(backend: 'stdio' | 'http', fixtureEra: FixtureKind): Target {
  return {
    // The legacy-backend names predate the modern era and are kept: CI logs and baselines use them.
    name: fixtureEra === 'legacy' ? `gateway-${backend}` : `gateway-${backend}-${fixtureEra}`,
    description: `switchboard over HTTP, the ${fixtureEra === 'dual' ? 'dual-era (legacy-asking)' : fixtureEra} fixture as its ${backend === 'stdio' ? 'stdio' : 'Streamable HTTP'} backend`,
    fixtureEra,
    backend,
    start: async (workDir, options) => {
      gatewayBuilt();
      if (fixtureEra === 'dual')
        return startGateway(workDir, options, `${backend}-dual`, await dualSpec(backend, options));
      // The backend's era is pinned, not probed: the fixture speaks only that era anyway, and
      // every target names its backend `fixture`, so a probe verdict kept from one target's run
      // must not decide another's. Probing itself is switchboard's own tests' business.
      const spec =
        backend === 'stdio'
          ? {
              command: process.execPath,
              args: [fixtureScript(), '--stdio', '--era', fixtureEra],
              era: fixtureEra,
              // Its code, readable in the sandbox even where the checkout lies under /tmp (hidden there).
              sandbox: { read: [projectRoot()] },
            }
          : { url: await startFixtureHttp(fixtureEra, options), era: fixtureEra };
      return startGateway(workDir, options, `${backend}-${fixtureEra}`, spec);
    },
  };
}

/**
 * The dual-era fixture's entry: switchboard's defaults, nothing pinned (no `era`, no `share`), as
 * an operator would write it. Each gateway run is a new process, so no verdict carries over.
 */
async function dualSpec(backend: 'stdio' | 'http', options: StartOptions): Promise<Record<string, unknown>> {
  return backend === 'stdio'
    ? {
        command: process.execPath,
        args: [fixtureScript(), '--stdio', '--era', 'both', '--ask-legacy'],
        sandbox: { read: [projectRoot()] },
      }
    : { url: await startFixtureHttp('both', options, ['--ask-legacy']) };
}

export const TARGETS: Record<TargetName, Target> = {
  'direct-legacy': direct('legacy'),
  'direct-modern': direct('modern'),
  'gateway-stdio': gateway('stdio', 'legacy'),
  'gateway-http': gateway('http', 'legacy'),
  'gateway-stdio-modern': gateway('stdio', 'modern'),
  'gateway-http-modern': gateway('http', 'modern'),
  'gateway-stdio-dual': gateway('stdio', 'dual'),
  'gateway-http-dual': gateway('http', 'dual'),
};

/** The fixture runs on the project's own Node (this process's), like any backend would. */
async function startFixtureHttp(
  era: Era | 'both',
  options: StartOptions,
  extra: string[] = [],
): Promise<string> {
  const script = fixtureScript();
  if (!existsSync(script)) throw new Error(`${script} does not exist: build first (npx tsc -p .)`);
  const fixture = startChild(
    'conformance fixture',
    process.execPath,
    [script, '--http', '0', '--era', era, ...extra],
    {
      echoStderr: options.verbose,
    },
  );
  const [url] = await fixture.waitForStderr(/http:\/\/127\.0\.0\.1:\d+\/mcp/, STARTUP_TIMEOUT_MS);
  return url;
}

async function startGateway(
  workDir: string,
  options: StartOptions,
  kind: string,
  backend: Record<string, unknown>,
): Promise<string> {
  const main = gatewayBuilt();
  // One backend, so the default (conditional) namespacing leaves every name as the fixture has it,
  // which the suite needs: it calls tools and prompts by their exact names.
  const config = join(workDir, `switchboard-${kind}.yaml`);
  // Polling on: a call still unanswered after 50 ms has its connection closed and is resumed with
  // Last-Event-ID (server-sse-polling's test_reconnection takes 100 ms, whichever backend runs it).
  // The suite's client sends no credentials: the front is open on loopback (auth.mode none).
  const http = { streams: { pollAfterMs: 50, retryMs: 50 }, auth: { mode: 'none' } };
  writeFileSync(config, stringify({ servers: { fixture: backend }, http }));
  const gateway = startChild(
    'switchboard',
    process.execPath,
    [main, 'up', '--config', config, '--port', '0'],
    {
      cwd: workDir,
      echoStderr: options.verbose,
    },
  );
  // The gateway may log its backend's URL first; that one has the fixture's port, so skip it.
  const skip = typeof backend.url === 'string' ? `(?!${new URL(backend.url).port}/)` : '';
  const ownUrl = new RegExp(`http://127\\.0\\.0\\.1:${skip}\\d+/mcp`);
  try {
    const [url] = (await gateway.waitForStderr(ownUrl, STARTUP_TIMEOUT_MS)) as [string];
    await waitForTool(url, options.hostEra);
    return url;
  } catch (error) {
    // What the gateway said is the only clue to why it never came up.
    throw new Error(`${(error as Error).message}\n--- switchboard stderr ---\n${gateway.stderrTail()}`, {
      cause: error,
    });
  }
}

function gatewayBuilt(): string {
  const main = gatewayScript();
  if (!existsSync(main)) throw new Error(`${main} does not exist: the gateway is not built yet`);
  return main;
}

/**
 * Polls until `tools/list` at `url`, asked in the suite's own era, names the probe tool: a gateway
 * may print its URL before its backends are up, and must serve that era, not just the other one.
 */
async function waitForTool(url: string, era: Era): Promise<void> {
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  let last = 'no attempt';
  while (Date.now() < deadline) {
    const client = new Client(
      { name: 'switchboard-conformance-probe', version: '1.0.0' },
      { versionNegotiation: { mode: era === 'modern' ? { pin: MODERN_VERSION } : 'legacy' } },
    );
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      const { tools } = await client.listTools();
      if (tools.some((tool) => tool.name === PROBE_TOOL)) return;
      last = `tools/list has no ${PROBE_TOOL} (got ${tools.map((tool) => tool.name).join(', ') || 'none'})`;
    } catch (error) {
      last = (error as Error).message;
    } finally {
      await client.close().catch(() => undefined);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${url} never served the fixture: ${last}`);
}
