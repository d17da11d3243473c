#!/usr/bin/env node
// The `switchboard` command: a table of subcommands, each with its own --help. `up` starts the
// gateway (also what runs with no command, or only options), the rest check, set up or tend it.
import { SERVER_INFO } from '../protocol/versions.js';
import { runApprovals } from './approvals.js';
import { runAudit } from './audit.js';
import { EXIT, say, usageError, type Command } from './command.js';
import { doctorCommand } from './doctor.js';
import { initCommand } from './init.js';
import { runKeys } from './keys.js';
import { runPins } from './pins.js';
import { runPolicy } from './policy.js';
import { upCommand } from './up.js';
import { validateCommand } from './validate.js';
import { runVault } from './vault.js';
import { runContext } from './context.js';
import { runStatus } from './status.js';
import { runTools } from './tools.js';
import { runCall } from './call.js';
import { runWorkflows } from './workflows.js';

/** Commands that parse their own arguments (subcommands, their own --help). */
const raw = (summary: string, main: (argv: string[]) => Promise<number>): Command => ({ summary, main });

/** Every command, in the order the overview lists them. One line each. */
const COMMANDS: Record<string, Command> = {
  up: upCommand,
  init: initCommand,
  validate: validateCommand,
  doctor: doctorCommand,
  audit: raw('tail, query or verify the audit chain (switchboard audit --help)', runAudit),
  pins: raw('list, diff or approve tool pins (switchboard pins --help)', runPins),
  vault: raw('init, set, list, rm or rotate the encrypted vault file (switchboard vault --help)', runVault),
  policy: raw('test which rule decides a call, and why (switchboard policy --help)', runPolicy),
  approvals: raw(
    'list, approve or deny calls waiting for a human (switchboard approvals --help)',
    runApprovals,
  ),
  keys: raw('make an API key for an HTTP host (switchboard keys new <name>)', (argv) => runKeys(argv)),
  status: raw('backends, sessions, call rates, pending approvals of the running switchboard', runStatus),
  tools: raw('the running catalog with pin state and scanner findings', runTools),
  call: raw('call a tool through the running switchboard (switchboard call TOOL --args JSON)', runCall),
  workflows: raw('list, run, show or cancel workflow runs (switchboard workflows --help)', runWorkflows),
  context: raw('get, list or put keys of the shared context store (switchboard context --help)', runContext),
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
  if (first === undefined) return COMMANDS.up!.main([]);
  const command = COMMANDS[first];
  if (command) return command.main(rest);
  if (first === 'help') {
    const about = rest[0] === undefined ? undefined : COMMANDS[rest[0]];
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
    if (at > 0) return COMMANDS[argv[at]!]!.main([...argv.slice(0, at), ...argv.slice(at + 1)]);
    return COMMANDS.up!.main(argv);
  }
  return usageError('', `unknown command "${first}"`, usage());
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
