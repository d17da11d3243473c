// `switchboard workflows list|run|runs|show|cancel`: the operator's side of workflows. list, runs
// and show read the config and the state database (the mesh's runs with mesh.state jetstream,
// workflows-mesh.ts); cancel asks, through the state database, the
// switchboard running a run to stop it (it looks twice a second); run calls the workflow tool of a
// running switchboard over MCP (--url), or starts one in this process from --config for one run.
import { existsSync } from 'node:fs';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { localTokenFor, localTokenPath } from '../front/http-auth.js';
import { readTokenFile } from '../state/token-file.js';
import { processAlive } from '../state/process-alive.js';
import { loadConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { exposedName } from '../catalog/naming.js';
import { defaultStateDbPath, openStateDb } from '../state/state-db.js';
import { startSwitchboard } from '../switchboard.js';
import { RunStore, type RunRow } from '../workflows/run-store.js';
import { WORKFLOWS_SOURCE } from '../workflows/workflow-source.js';
import { processIo, parseCommand, type CommandIo } from './io.js';
import { cancelThroughMesh, meshRuns, sharedRuns, type RunsView } from './workflows-mesh.js';

export const WORKFLOWS_USAGE = `Usage: switchboard workflows <list|run|runs|show|cancel> [options]

  list                     The workflows of --config: tool name, steps, description
  run NAME --args JSON     Run a workflow and print its result: on the switchboard at --url (its
                           MCP endpoint), else in a switchboard started here from --config
  runs                     Recent runs, newest first (--workflow NAME, --limit N); with mesh.state
                           jetstream in --config, the runs of every node of the mesh
  show RUN                 One run: its input, result or error, and each step's outcome (likewise)
  cancel RUN               Ask the switchboard running RUN to cancel it (steps under way are cancelled);
                           with mesh.state jetstream in --config, whichever node of the mesh runs it

Options: --config FILE, --state FILE (default: state.path of --config, else
         $XDG_STATE_HOME/switchboard/state.sqlite, ~/.local/state/… without it), --url URL,
         --token TOKEN (an API key for --url; default for the port of a running switchboard's
         front: the local token, $XDG_STATE_HOME/switchboard/http-token),
         --json (one JSON object per line)`;

const OPTIONS = {
  config: { type: 'string', short: 'c' },
  state: { type: 'string' },
  args: { type: 'string' },
  url: { type: 'string' },
  token: { type: 'string' },
  workflow: { type: 'string' },
  limit: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export async function runWorkflows(argv: string[], io: CommandIo = processIo): Promise<number> {
  const parsed = parseCommand('workflows', WORKFLOWS_USAGE, argv, OPTIONS, io);
  if (!parsed) return 2;
  const { values: v, positionals } = parsed;
  const [sub, arg] = positionals;
  const needsArg = sub === 'run' || sub === 'show' || sub === 'cancel';
  const known = ['list', 'run', 'runs', 'show', 'cancel'].includes(sub ?? '');
  if (v.help || !known || (needsArg && !arg)) {
    (v.help ? io.out : io.err)(WORKFLOWS_USAGE);
    return v.help ? 0 : 2;
  }
  let config: Config | undefined;
  if (v.config) {
    try {
      config = (await loadConfig(v.config)).config;
    } catch (err) {
      io.err(`switchboard workflows: ${(err as Error).message}`);
      return 1;
    }
  }
  if (sub === 'list') {
    if (!config) return needs(io, 'list', '--config FILE');
    for (const [name, wf] of Object.entries(config.workflows)) {
      const tool = toolName(config, name);
      const kinds = wf.steps.map((s) => `${s.id}`).join(', ');
      if (v.json) io.out(JSON.stringify({ name, tool, description: wf.description, steps: wf.steps.length }));
      else
        io.out(`${tool}  ${wf.steps.length} steps (${kinds})${wf.description ? `  ${wf.description}` : ''}`);
    }
    return 0;
  }
  if (sub === 'run') return run(arg!, v, config, io);
  // Runs shared over the mesh: the cancel goes where every node hears it, not to one node's file.
  if (sub === 'cancel' && sharedRuns(config)) return cancelThroughMesh(config, arg!, io);
  let view: RunsView;
  if (sharedRuns(config) && sub !== 'cancel') view = meshRuns(config);
  else {
    const path = v.state ?? config?.state.path ?? defaultStateDbPath();
    if (!existsSync(path)) {
      io.err(`switchboard workflows: no state database at ${path} (has switchboard run with this config?)`);
      return 1;
    }
    const db = openStateDb(path);
    const store = new RunStore(db);
    if (sub === 'cancel') {
      try {
        const row = store.get(arg!);
        if (!row) return noRun(io, arg!);
        if (!store.requestCancel(row.id)) {
          io.err(`switchboard workflows: run ${row.id} is ${row.status}, not running`);
          return 1;
        }
        // No switchboard runs it (its process is gone): nobody would act on the request until a
        // restart, so it ends here.
        if (row.ownerPid !== null && !processAlive(row.ownerPid)) {
          store.cancelStranded(row.id, 'cancelled while no switchboard was running it');
          io.out(`cancelled ${row.id} (no switchboard was running it: process ${row.ownerPid} is gone)`);
          return 0;
        }
        io.out(`cancel requested for ${row.id}; the switchboard running it stops it within a second`);
        return 0;
      } finally {
        db.close();
      }
    }
    view = {
      list: (limit, workflow) => Promise.resolve(store.list(limit, workflow)),
      get: (id) => {
        const row = store.get(id);
        return Promise.resolve(row && { row, steps: store.steps(row.id) });
      },
      close: () => {
        db.close();
        return Promise.resolve();
      },
    };
  }
  try {
    if (sub === 'runs') {
      for (const r of await view.list(Number(v.limit ?? 50), v.workflow))
        io.out(v.json ? JSON.stringify(r) : line(r));
      return 0;
    }
    const found = await view.get(arg!);
    if (!found) return noRun(io, arg!);
    const { row, steps } = found;
    if (v.json) io.out(JSON.stringify({ ...row, steps }));
    else {
      io.out(line(row));
      io.out(`  input: ${JSON.stringify(row.input)}`);
      if (row.result !== undefined) io.out(`  result: ${JSON.stringify(row.result)}`);
      for (const s of steps)
        io.out(
          `  ${s.step}  ${s.status}${s.error ? `  ${s.error}` : ''}${s.output !== undefined ? `  ${JSON.stringify((s.output as { data?: unknown }).data)}` : ''}`,
        );
    }
    return 0;
  } catch (err) {
    io.err(`switchboard workflows: ${(err as Error).message}`);
    return 1;
  } finally {
    await view.close();
  }
}

function noRun(io: CommandIo, run: string): number {
  io.err(`switchboard workflows: no run ${run}`);
  return 1;
}

function needs(io: CommandIo, sub: string, what: string): number {
  io.err(`switchboard workflows ${sub}: ${what} is required`);
  return 2;
}

function toolName(config: Config, workflow: string): string {
  const sep = config.namespacing.separator;
  return exposedName(
    {
      backend: WORKFLOWS_SOURCE,
      prefixed: true,
      prefix: WORKFLOWS_SOURCE,
      separator: sep,
      uriPrefix: WORKFLOWS_SOURCE,
    },
    workflow,
  );
}

function line(r: RunRow): string {
  const ended = r.endedAt ? ` ${r.endedAt - r.startedAt} ms` : '';
  return `${r.id}  ${r.workflow}  ${r.status}${ended}  for ${r.caller}  ${new Date(r.startedAt).toISOString()}${r.error ? `  ${r.error}` : ''}`;
}

/** The workflow tool's answer from the switchboard at `url`, or why there is none. */
async function callAt(
  url: string,
  given: string | undefined,
  tool: string,
  args: Record<string, unknown>,
): Promise<Record<string, unknown> | string> {
  const token = given ?? localTokenFor(url);
  const headers = token ? { Authorization: `Bearer ${token}` } : undefined;
  const client = new Client({ name: 'switchboard-workflows-cli', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  try {
    await client.connect(transport);
    return (await client.callTool({ name: tool, arguments: args })) as Record<string, unknown>;
  } catch (err) {
    const said = err instanceof Error ? err.message : String(err);
    if (!/Unauthorized/.test(said)) return `${url}: ${said}`;
    const why =
      given !== undefined
        ? 'the --token given was refused'
        : token
          ? `the local token of ${localTokenPath()} was refused (another switchboard's?)`
          : readTokenFile(localTokenPath())
            ? `no --token given, and no switchboard of this user's is noted as serving ${url} (the local token goes only to one)`
            : `no --token given, and no local token at ${localTokenPath()}`;
    return `${url} refused the call: ${why}. Pass --token KEY, or run with the XDG_STATE_HOME of the switchboard there`;
  } finally {
    // Its session ends with it (DELETE): left to its ttl, one per run would fill the caller's
    // sessions (http.sessions.maxPerCaller), which every local-token host shares.
    await transport.terminateSession().catch(() => {});
    await client.close();
  }
}

async function run(
  name: string,
  v: { args?: string | undefined; url?: string | undefined; token?: string | undefined },
  config: Config | undefined,
  io: CommandIo,
): Promise<number> {
  let args: unknown;
  try {
    args = JSON.parse(v.args ?? '{}');
  } catch (err) {
    io.err(`switchboard workflows run: --args is not JSON: ${(err as Error).message}`);
    return 2;
  }
  const tool = config ? toolName(config, name) : `${WORKFLOWS_SOURCE}_${name}`;
  let result: Record<string, unknown>;
  if (v.url) {
    const called = await callAt(v.url, v.token, tool, args as Record<string, unknown>);
    if (typeof called === 'string') {
      io.err(`switchboard workflows run: ${called}`);
      return 1;
    }
    result = called;
  } else {
    if (!config) return needs(io, 'run', '--url URL or --config FILE');
    // One run in this process: no front, the config's backends, state and audit as `up` would.
    // Nothing else holds the event loop open while a step waits on a backend (no listener here).
    const hold = setInterval(() => {}, 60_000);
    const sb = await startSwitchboard({ config, http: false });
    try {
      result = await sb.gateway.dispatch({ kind: 'host', id: 'cli' }, 'tools/call', {
        name: tool,
        arguments: args,
      });
    } finally {
      await sb.stop();
      clearInterval(hold);
    }
  }
  io.out(JSON.stringify(result, null, 2));
  return result.isError === true ? 1 : 0;
}
