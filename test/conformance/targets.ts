// What the conformance suite is pointed at: the fixture itself, or switchboard fronting the fixture over stdio or HTTP.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { stringify } from 'yaml';

import { projectRoot } from './node22.js';
import { startChild } from './processes.js';

export type TargetName = 'direct' | 'gateway-stdio' | 'gateway-http';

export interface StartOptions {
  /** Copy the children's stderr to ours as it arrives. */
  verbose: boolean;
}

export interface Target {
  readonly name: TargetName;
  readonly description: string;
  /** Starts every process the target needs and resolves with the MCP URL once it serves the fixture's tools. */
  start(workDir: string, options: StartOptions): Promise<string>;
}

const STARTUP_TIMEOUT_MS = 30_000;
// A tool every requirement set calls: when the URL lists it, the fixture is reachable through it.
const PROBE_TOOL = 'test_simple_text';

const fixtureScript = (): string => join(projectRoot(), 'dist', 'test', 'fixtures', 'conformance-server.js');
const gatewayScript = (): string => join(projectRoot(), 'dist', 'src', 'cli', 'main.js');

export const TARGETS: Record<TargetName, Target> = {
  direct: {
    name: 'direct',
    description: 'the fixture over Streamable HTTP, no gateway (proves the fixture)',
    start: async (_workDir, options) => {
      const url = await startFixtureHttp(options);
      await waitForTool(url);
      return url;
    },
  },
  'gateway-stdio': {
    name: 'gateway-stdio',
    description: 'switchboard over HTTP, the fixture as its stdio backend',
    start: (workDir, options) =>
      startGateway(workDir, options, 'stdio', {
        command: process.execPath,
        args: [fixtureScript(), '--stdio'],
        // The fixture serves both eras; these targets keep the legacy suite same-era end to end.
        era: 'legacy',
      }),
  },
  'gateway-http': {
    name: 'gateway-http',
    description: 'switchboard over HTTP, the fixture as its Streamable HTTP backend',
    start: async (workDir, options) => {
      gatewayBuilt();
      return startGateway(workDir, options, 'http', { url: await startFixtureHttp(options), era: 'legacy' });
    },
  },
};

/** The fixture runs on the project's own Node (this process's), like any backend would. */
async function startFixtureHttp(options: StartOptions): Promise<string> {
  const script = fixtureScript();
  if (!existsSync(script)) throw new Error(`${script} does not exist: build first (npx tsc -p .)`);
  const fixture = startChild('conformance fixture', process.execPath, [script, '--http', '0'], {
    echoStderr: options.verbose,
  });
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
  writeFileSync(config, stringify({ servers: { fixture: backend } }));
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
    await waitForTool(url);
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

/** Polls until `tools/list` at `url` names the probe tool: a gateway may print its URL before its backends are up. */
async function waitForTool(url: string): Promise<void> {
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  let last = 'no attempt';
  while (Date.now() < deadline) {
    const client = new Client({ name: 'switchboard-conformance-probe', version: '1.0.0' });
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
