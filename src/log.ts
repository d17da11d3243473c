// Structured logging to stderr (stdout carries JSON-RPC in stdio mode).
import { pino, type Logger as PinoLogger } from 'pino';

/** What takes secrets out of a log line (the vault's Redactor). */
export interface LineRedactor {
  readonly active: boolean;
  text(line: string): string;
}

export type Logger = Pick<PinoLogger, 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'child'>;

/**
 * A logger to stderr. With a redactor, every line is rewritten as it is written, so no vault
 * secret or configured pattern reaches the log whichever field (message, bindings, a backend's
 * stderr, an error's stack) carried it; with nothing to hide the line passes untouched.
 */
export function createLogger(
  level: string = process.env.SWITCHBOARD_LOG_LEVEL ?? 'info',
  redactor?: LineRedactor,
): Logger {
  const stderr = pino.destination(2);
  const destination = redactor
    ? {
        write: (line: string) => stderr.write(redactor.active ? redactor.text(line) : line),
        flush: () => stderr.flush(),
        flushSync: () => stderr.flushSync(),
      }
    : stderr;
  return pino({ level, base: undefined, timestamp: pino.stdTimeFunctions.isoTime }, destination);
}

/** A logger that drops everything: the default where a caller passes none (tests, library use). */
export const silentLogger: Logger = pino({ level: 'silent' });
