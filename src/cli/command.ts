// What every `switchboard` command is to the dispatcher: a one-line summary for the overview and
// a function of its arguments. Commands with options declare them here once, and get --help and
// a usage error (exit 2) for an unknown option or a stray argument without writing either.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { closest } from '../config/issues.js';

/**
 * Exit codes of every command: 0 all went well (`up`: stopped with no host call cut); 1 it failed
 * (`up`: did not start, or its stop cut host calls still under way at shutdown.drainMs); 2 the
 * command line was wrong. docs/gateway.md lists them.
 */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

export interface Command {
  readonly summary: string;
  main(argv: string[]): Promise<number>;
}

type Options = NonNullable<ParseArgsConfig['options']>;
type Parsed<O extends Options> = ReturnType<
  typeof parseArgs<{ args: string[]; allowPositionals: true; options: O }>
>;

export interface CommandSpec<O extends Options> {
  readonly usage: string;
  /** Must include `help: { type: 'boolean', short: 'h' }`. */
  readonly options: O;
  /** How many positionals it takes (default none). */
  readonly positionals?: { min: number; max: number };
  run(parsed: Parsed<O>): Promise<number>;
}

export function say(text: string): void {
  process.stderr.write(text + '\n');
}

/** A wrong command line: what is wrong, then the usage, on stderr; exit 2. */
export function usageError(command: string, why: string, usage: string): number {
  say(`switchboard${command ? ` ${command}` : ''}: ${why}\n\n${usage}`);
  return EXIT.usage;
}

/** A command whose options are parsed strictly; -h/--help anywhere prints its usage and exits 0. */
export function defineCommand<const O extends Options>(
  name: string,
  spec: CommandSpec<O>,
): Pick<Command, 'main'> {
  return {
    async main(argv) {
      if (argv.includes('--help') || argv.includes('-h')) {
        process.stdout.write(spec.usage + '\n');
        return EXIT.ok;
      }
      let parsed: Parsed<O>;
      try {
        parsed = parseArgs({ args: argv, allowPositionals: true, strict: true, options: spec.options });
      } catch (err) {
        return usageError(name, optionProblem(err as Error, spec.options), spec.usage);
      }
      const { min, max } = spec.positionals ?? { min: 0, max: 0 };
      const n = parsed.positionals.length;
      if (n > max) return usageError(name, `unexpected argument "${parsed.positionals[max]}"`, spec.usage);
      if (n < min) return usageError(name, 'missing argument', spec.usage);
      return spec.run(parsed);
    },
  };
}

/**
 * parseArgs' complaint in a user's words: an unknown option is named with the nearest known one
 * (its own text ends in advice about positionals starting with '-', which no command here takes).
 */
export function optionProblem(err: Error & { code?: string }, options: Options): string {
  const unknown = /^Unknown option '(--?[^']+)'/.exec(err.message)?.[1];
  if (err.code !== 'ERR_PARSE_ARGS_UNKNOWN_OPTION' || unknown === undefined) return err.message;
  const known = Object.keys(options).map((k) => `--${k}`);
  const near = closest(unknown.split('=')[0]!, known);
  return `unknown option ${unknown}${near ? ` (did you mean ${near}?)` : ''}`;
}
