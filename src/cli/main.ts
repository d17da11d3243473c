#!/usr/bin/env node
// The `switchboard` command: a table of subcommands, each with its own --help. `up` starts the
// gateway (also what runs with no command, or only options), the rest check, set up or tend it.
import { ownValue } from '../encoding/set-own.js';
import { SERVER_INFO } from '../protocol/versions.js';
import { EXIT, say, usageError, type Command } from './command.js';

/**
 * A command whose module is loaded only when it runs: `switchboard audit --help` loads the audit
 * command, not the gateway, and every command starts as fast as its own imports allow.
 */
const lazy = (summary: string, load: () => Promise<(argv: string[]) => Promise<number>>): Command => ({
  summary,
  main: async (argv) => (await load())(argv),
});

/** Every command, in the order the overview lists them. One line each. */
const COMMANDS: Record<string, Command> = {
  up: lazy('Start switchboard (without --config: the bundled example servers)', async () => {
    const { upCommand } = await import('./up.js');
    return (argv) => upCommand.main(argv);
  }),
  init: lazy(
    'Write a starter switchboard.yaml, importing the servers of Claude Desktop, Cursor or VS Code',
    async () => {
      const { initCommand } = await import('./init.js');
      return (argv) => initCommand.main(argv);
    },
  ),
  validate: lazy(
    'Check a configuration file, start its servers once to find failures and collisions, and exit',
    async () => {
      const { validateCommand } = await import('./validate.js');
      return (argv) => validateCommand.main(argv);
    },
  ),
  doctor: lazy(
    'Check this machine for a configuration: Node, sandbox, ports, PATH, permissions',
    async () => {
      const { doctorCommand } = await import('./doctor.js');
      return (argv) => doctorCommand.main(argv);
    },
  ),
  audit: lazy(
    'tail, query or verify the audit chain (switchboard audit --help)',
    async () => (await import('./audit.js')).runAudit,
  ),
  pins: lazy(
    'list, diff or approve tool pins (switchboard pins --help)',
    async () => (await import('./pins.js')).runPins,
  ),
  vault: lazy(
    'init, set, list, rm or rotate the encrypted vault file (switchboard vault --help)',
    async () => (await import('./vault.js')).runVault,
  ),
  policy: lazy(
    'test which rule decides a call, and why (switchboard policy --help)',
    async () => (await import('./policy.js')).runPolicy,
  ),
  approvals: lazy(
    'list, approve or deny calls waiting for a human (switchboard approvals --help)',
    async () => (await import('./approvals.js')).runApprovals,
  ),
  keys: lazy('make an API key for an HTTP host (switchboard keys new <name>)', async () => {
    const { runKeys } = await import('./keys.js');
    return (argv) => runKeys(argv);
  }),
  status: lazy(
    'backends, sessions, call rates, pending approvals of the running switchboard',
    async () => (await import('./status.js')).runStatus,
  ),
  tools: lazy(
    'the running catalog with pin state and scanner findings',
    async () => (await import('./tools.js')).runTools,
  ),
  call: lazy(
    'call a tool through the running switchboard (switchboard call TOOL --args JSON)',
    async () => (await import('./call.js')).runCall,
  ),
  workflows: lazy(
    'list, run, show or cancel workflow runs (switchboard workflows --help)',
    async () => (await import('./workflows.js')).runWorkflows,
  ),
  context: lazy(
    'get, list or put keys of the shared context store (switchboard context --help)',
    async () => (await import('./context.js')).runContext,
  ),
};

function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((n) => n.length));
  const lines = Object.entries(COMMANDS).map(([n, c]) => `  ${n.padEnd(width)}  ${c.summary}`);
  return `Usage: switchboard <command> [options]

Commands:
${lines.join('\n')}

Run "switchboard <command> --help" for a command's options. With no command, or only options,
switchboard runs "up".

Options:
  -h, --help      Show this help
  -v, --version   Show the version`;
}

async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined) return run('up', []);
  if (ownValue(COMMANDS, first)) return run(first, rest);
  stopQuietlyWhenStdoutCloses();
  if (first === 'help') {
    const about = rest[0] === undefined ? undefined : ownValue(COMMANDS, rest[0]);
    if (about) return about.main(['--help']);
    process.stdout.write(usage() + '\n');
    return EXIT.ok;
  }
  if (first === '-h' || first === '--help') {
    process.stdout.write(usage() + '\n');
    return EXIT.ok;
  }
  if (first === '-v' || first === '--version') {
    process.stdout.write(SERVER_INFO.version + '\n');
    return EXIT.ok;
  }
  if (first.startsWith('-')) {
    // Options before the command (`switchboard --config x validate`) or none at all (`up`).
    const at = argv.findIndex((a) => COMMANDS[a] !== undefined);
    if (at > 0) return run(argv[at]!, [...argv.slice(0, at), ...argv.slice(at + 1)]);
    return run('up', argv);
  }
  return usageError('', `unknown command "${first}"`, usage());
}

function run(name: string, args: string[]): Promise<number> {
  if (name !== 'up') stopQuietlyWhenStdoutCloses();
  return COMMANDS[name]!.main(args);
}

/**
 * A reader that stops early (`switchboard status | head -1`) closes the pipe: the command ends
 * quietly, as Unix tools do, rather than on an unhandled EPIPE. Not for `up`, whose stdout may
 * be the stdio front's, which finishes its calls when the host goes (front/stdio.ts).
 */
function stopQuietlyWhenStdoutCloses(): void {
  if (process.stdout.listenerCount('error') > 0) return;
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(EXIT.ok);
    throw err;
  });
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exit(code);
  },
  (err: unknown) => {
    say(`switchboard: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(EXIT.failed);
  },
);
