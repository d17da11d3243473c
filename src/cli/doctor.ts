// `switchboard doctor`: checks that this machine can run the configuration: Node, the sandbox, the
// ports, the PATH backends will see, the permissions of the state directory and the vault, the mesh.
// Each check is ok, warn or fail with a one-line fix; any fail exits 1.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { assertPortFree } from '../net/loopback-twin.js';
import { dirname, join } from 'node:path';
import { embeddedConfig } from '../config/defaults.js';
import { loadConfig } from '../config/load.js';
import { authModeOf, isLoopbackHost, isStdioBackend, type Config } from '../config/schema.js';
import { localTokenPath } from '../front/http-auth.js';
import { childEnvironment } from '../backends/stdio-channel.js';
import { findCommand } from '../sandbox/command-path.js';
import { BY_NAME, PIN_FIX, probeSandbox } from '../sandbox/sandbox-probe.js';
import { stateDirFile } from '../state/sqlite-file.js';
import { defaultVaultPath } from '../vault/open.js';
import { EXIT, defineCommand, say } from './command.js';
import { modeCheck, type Check } from './doctor-check.js';
import { meshChecks } from './doctor-mesh.js';
import { workingDirProblem } from '../backends/working-dir.js';
import { privateTmpProblems } from '../sandbox/private-tmp.js';

export const DOCTOR_USAGE = `Usage: switchboard doctor [--config FILE]

Checks this machine for the configuration (without --config: the bundled example servers): Node
version, sandbox, ports (MCP and admin), who may use the HTTP front, the PATH backends see and
whether each command is found on it, and the permissions of the state directory and the vault,
and with a mesh its keys and NATS servers. Exits 1 if any check fails.

Options:
  -c, --config FILE  The configuration to check for
  -h, --help         Show this help`;

export const doctorCommand = defineCommand('doctor', {
  usage: DOCTOR_USAGE,
  options: { config: { type: 'string', short: 'c' }, help: { type: 'boolean', short: 'h' } },
  run: async ({ values }) => {
    let config: Config;
    try {
      config = values.config ? (await loadConfig(values.config)).config : embeddedConfig();
    } catch (err) {
      say((err as Error).message);
      return EXIT.failed;
    }
    const checks = await runChecks(config);
    const width = Math.max(...checks.map((c) => c.name.length));
    for (const c of checks) {
      process.stdout.write(`${c.status.padEnd(4)}  ${c.name.padEnd(width)}  ${c.detail}\n`);
      if (c.fix && c.status !== 'ok') process.stdout.write(`${' '.repeat(width + 8)}fix: ${c.fix}\n`);
    }
    const failed = checks.filter((c) => c.status === 'fail').length;
    const warned = checks.filter((c) => c.status === 'warn').length;
    say(`${checks.length} checks: ${failed} failed, ${warned} warnings`);
    return failed > 0 ? EXIT.failed : EXIT.ok;
  },
});

export async function runChecks(config: Config, env: NodeJS.ProcessEnv = process.env): Promise<Check[]> {
  const { check: sandbox, contained } = await sandboxCheck(config);
  return [
    nodeCheck(),
    sandbox,
    ...(await portChecks(config)),
    httpAuthCheck(config, env),
    ...commandChecks(config, env),
    // Only where a sandbox will be made: without one a backend sees the host's /tmp.
    ...(contained ? privateTmpChecks(config) : []),
    ...stateChecks(config, env),
    ...vaultChecks(config, env),
    ...(await meshChecks(config.mesh)),
  ];
}

function nodeCheck(): Check {
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
    engines?: { node?: string };
  };
  const wanted = pkg.engines?.node ?? '>=20.19';
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  const [wMajor = 0, wMinor = 0] = (/(\d+)(?:\.(\d+))?/.exec(wanted) ?? [])
    .slice(1)
    .map((n) => Number(n ?? 0));
  const ok = major > wMajor || (major === wMajor && minor >= wMinor);
  return {
    status: ok ? 'ok' : 'fail',
    name: 'node',
    detail: `${process.version} (needs ${wanted})`,
    fix: `install Node ${wanted.replace('>=', '')} or newer`,
  };
}

/** The sandbox check, and whether backends will run in one (they do even where it warns). */
async function sandboxCheck(config: Config): Promise<{ check: Check; contained: boolean }> {
  const { mode, bwrap } = config.sandbox;
  const name = 'sandbox';
  if (mode === 'none')
    return {
      check: { status: 'warn', name, detail: 'off (sandbox.mode: none)', fix: 'set sandbox.mode: auto' },
      contained: false,
    };
  const probe = await probeSandbox(bwrap);
  if (probe.available && !probe.pins) {
    const detail = `bubblewrap (${probe.bwrap}); ${BY_NAME}`;
    return {
      check: { status: 'warn', name, detail, fix: PIN_FIX },
      contained: true,
    };
  }
  if (probe.available)
    return { check: { status: 'ok', name, detail: `bubblewrap (${probe.bwrap})` }, contained: true };
  return {
    check: {
      status: mode === 'required' ? 'fail' : 'warn',
      name,
      detail: `none available: ${probe.reason}; stdio backends run unsandboxed`,
      fix:
        process.platform === 'linux'
          ? 'install bubblewrap (apt install bubblewrap) and allow unprivileged user namespaces'
          : 'run on Linux for a sandbox, or accept unsandboxed backends (sandbox.mode: auto)',
    },
    contained: false,
  };
}

async function portChecks(config: Config): Promise<Check[]> {
  const { admin } = config;
  return [
    await portCheck('port', config.http, 'choose another with --port or http.port (0 picks a free one)'),
    ...(admin.enabled
      ? [
          await portCheck(
            'admin port',
            admin,
            'choose another with admin.port (0 picks a free one), or admin.enabled: false',
          ),
        ]
      : []),
  ];
}

/** Whether `host`:`port` can be bound now. */
async function portCheck(name: string, at: { host: string; port: number }, choose: string): Promise<Check> {
  const { port, host } = at;
  if (port === 0) return { status: 'ok', name, detail: `port 0: a free port is picked at start` };
  // As the listeners will bind it: a loopback address with its twin (loopback-twin.ts).
  const free = await assertPortFree(host, port).then(
    () => undefined,
    (err: NodeJS.ErrnoException) => err.code ?? err.message,
  );
  if (free === undefined) return { status: 'ok', name, detail: `${host}:${port} is free` };
  return {
    status: 'fail',
    name,
    detail: `${host}:${port} cannot be used (${free === 'EADDRINUSE' ? 'in use: is switchboard already running?' : free})`,
    fix: `stop what holds it, or ${choose}`,
  };
}

/** Who may use the HTTP front, and for the default, where the token hosts send is kept. */
function httpAuthCheck(config: Config, env: NodeJS.ProcessEnv): Check {
  const { auth, host } = config.http;
  const mode = authModeOf(auth);
  if (mode === 'none') {
    const who = isLoopbackHost(host) ? 'any process on this machine' : `anyone who reaches ${host}`;
    return {
      status: 'warn',
      name: 'http auth',
      detail: `none: ${who} can call every tool as the caller http, sandboxed backends with network included`,
      fix: 'drop http.auth.mode to use the local token, or configure http.auth.keys',
    };
  }
  if (mode !== 'local') return { status: 'ok', name: 'http auth', detail: mode };
  const path = localTokenPath(env);
  const made = existsSync(path) ? '' : ' (made at first start)';
  return { status: 'ok', name: 'http auth', detail: `local token: hosts send the one in ${path}${made}` };
}

/** The PATH each stdio backend will see (its inheritEnv and env), and whether its command is on it. */
function commandChecks(config: Config, env: NodeJS.ProcessEnv): Check[] {
  const checks: Check[] = [{ status: 'ok', name: 'PATH', detail: env.PATH ?? '(not set)' }];
  for (const [name, b] of Object.entries(config.servers)) {
    if (!isStdioBackend(b) || b.disabled) continue;
    const path = childEnvironment(b, env).PATH;
    const badCwd = workingDirProblem(b.cwd);
    if (badCwd !== undefined) {
      checks.push({
        status: 'fail',
        name: `servers.${name}`,
        detail: badCwd,
        fix: `set servers.${name}.cwd to an existing directory, or leave it out`,
      });
      continue;
    }
    try {
      const found = findCommand(b.command, path, b.cwd ?? process.cwd());
      checks.push({ status: 'ok', name: `servers.${name}`, detail: `${b.command} -> ${found}` });
    } catch {
      checks.push({
        status: 'fail',
        name: `servers.${name}`,
        detail: `command "${b.command}" not found on the PATH it sees: ${path ?? '(no PATH)'}`,
        fix: `give an absolute command path, or set servers.${name}.env.PATH (hosts such as Claude Desktop start switchboard without your shell's PATH)`,
      });
    }
  }
  return checks;
}

/** Backends whose command line names a path under /tmp their sandbox's private /tmp does not have. */
function privateTmpChecks(config: Config): Check[] {
  return privateTmpProblems(config).map(({ name, why, fix }) => ({
    status: 'warn',
    name: `servers.${name}`,
    detail: why,
    fix,
  }));
}

/** Owner-only state: the directory 0700, what is in it 0600. */
function stateChecks(config: Config, env: NodeJS.ProcessEnv): Check[] {
  const dir = dirname(stateDirFile('audit.sqlite', env));
  const files = [config.audit.path, config.vault.file ?? defaultVaultPath(env)].filter(
    (f): f is string => f !== undefined && dirname(f) !== dir,
  );
  if (!existsSync(dir))
    return [{ status: 'ok', name: 'state dir', detail: `${dir} (created owner-only at first start)` }];
  const checks: Check[] = [modeCheck('state dir', dir, 0o700)];
  for (const entry of readdirSync(dir)) files.push(join(dir, entry));
  for (const file of files) {
    if (!existsSync(file) || statSync(file).isDirectory()) continue;
    const c = modeCheck(file, file, 0o600);
    if (c.status !== 'ok') checks.push(c);
  }
  if (checks.length === 1 && checks[0]!.status === 'ok')
    checks.push({ status: 'ok', name: 'state files', detail: 'owner-only' });
  return checks;
}

function vaultChecks(config: Config, env: NodeJS.ProcessEnv): Check[] {
  const { keyFile, passphraseEnv, file } = config.vault;
  if (keyFile === undefined && passphraseEnv === undefined)
    return [{ status: 'ok', name: 'vault', detail: 'no vault file configured' }];
  const checks: Check[] = [];
  if (keyFile !== undefined) {
    checks.push(
      existsSync(keyFile)
        ? modeCheck('vault key', keyFile, 0o600, 'fail')
        : {
            status: 'fail',
            name: 'vault key',
            detail: `${keyFile} not found`,
            fix: 'switchboard vault init --key-file FILE',
          },
    );
  }
  if (passphraseEnv !== undefined && !env[passphraseEnv])
    checks.push({
      status: 'fail',
      name: 'vault key',
      detail: `${passphraseEnv} is not set`,
      fix: `export ${passphraseEnv} in the environment switchboard starts in`,
    });
  const vault = file ?? defaultVaultPath(env);
  checks.push(
    existsSync(vault)
      ? modeCheck('vault file', vault, 0o600, 'fail')
      : { status: 'fail', name: 'vault file', detail: `${vault} not found`, fix: 'switchboard vault init' },
  );
  return checks;
}
