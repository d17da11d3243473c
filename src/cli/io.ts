// How the operator commands (audit, pins) print: stdout for results, stderr for messages.
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
