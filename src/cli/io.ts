// How the operator commands (audit, pins, policy, approvals, vault) read their arguments and
// print: stdout for results, stderr for messages.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { optionProblem } from './command.js';

type Options = NonNullable<ParseArgsConfig['options']>;

export interface CommandIo {
  out(line: string): void;
  err(line: string): void;
  /** Resolves when --follow should stop (SIGINT in the CLI). */
  stopped?: Promise<void>;
}

export const processIo: CommandIo = {
  out: (l) => void process.stdout.write(l + '\n'),
  err: (l) => void process.stderr.write(l + '\n'),
};

/**
 * Parses an operator command's arguments; a malformed command line is reported with the usage
 * and gives undefined (the command then exits 2).
 */
export function parseCommand<const O extends Options>(
  command: string,
  usage: string,
  argv: string[],
  options: O,
  io: CommandIo,
): ReturnType<typeof parseArgs<{ args: string[]; allowPositionals: true; options: O }>> | undefined {
  try {
    return parseArgs({ args: argv, allowPositionals: true, options });
  } catch (err) {
    io.err(`switchboard ${command}: ${optionProblem(err as Error, options)}\n\n${usage}`);
    return undefined;
  }
}
