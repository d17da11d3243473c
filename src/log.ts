// Structured logging to stderr (stdout carries JSON-RPC in stdio mode): JSON lines for tools, or
// the same records made readable for a person at a terminal.
import { pino, type Logger as PinoLogger } from 'pino';
import { prettyFactory } from 'pino-pretty';
import { format } from 'node:util';
import { blindJsonError } from './encoding/json-error.js';

/** What takes secrets out of a log line (the vault's Redactor). */
export interface LineRedactor {
  readonly active: boolean;
  text(line: string): string;
}

export type Logger = Pick<
  PinoLogger,
  'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'child' | 'isLevelEnabled'
>;

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ['pretty', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export function isLogLevel(value: string): value is LogLevelName {
  return (LOG_LEVELS as readonly string[]).includes(value);
}

export function isLogFormat(value: string): value is LogFormat {
  return (LOG_FORMATS as readonly string[]).includes(value);
}

export interface LoggerOptions {
  /** json: one JSON object a line; pretty: pino-pretty's layout (default: json). */
  format?: LogFormat | undefined;
  /** Colours in pretty mode (default: whether stderr is a terminal). */
  colorize?: boolean | undefined;
}

/**
 * A logger to stderr. With a redactor, every line is rewritten as it is written, so no vault
 * secret or configured pattern reaches the log whichever field (message, bindings, a backend's
 * stderr, an error's stack) carried it; with nothing to hide the line passes untouched. Pretty
 * output is made in this thread, line by line, from the redacted JSON (pino-pretty as a function,
 * not a transport worker): nothing reaches stdout and nothing is lost when the process exits.
 */
export function createLogger(
  level: string = process.env.SWITCHBOARD_LOG_LEVEL ?? 'info',
  redactor?: LineRedactor,
  options: LoggerOptions = {},
): Logger {
  const stderr = pino.destination({ dest: 2, sync: true });
  const prettify =
    options.format === 'pretty'
      ? prettyFactory({
          colorize: options.colorize ?? process.stderr.isTTY === true,
          translateTime: 'SYS:HH:MM:ss.l',
          ignore: 'pid,hostname',
          singleLine: true,
        })
      : undefined;
  const clean = (line: string) => (redactor?.active ? redactor.text(line) : line);
  const destination =
    redactor || prettify
      ? {
          write: (line: string) => {
            const text = clean(line);
            stderr.write(prettify ? prettify(text) : text);
          },
          flush: () => stderr.flush(),
          flushSync: () => stderr.flushSync(),
        }
      : stderr;
  return pino({ level, base: undefined, timestamp: pino.stdTimeFunctions.isoTime }, destination);
}

/** A logger that drops everything: the default where a caller passes none (tests, library use). */
export const silentLogger: Logger = pino({ level: 'silent' });

/**
 * Sends what libraries write with `console` to the log: to stderr through its redactor, never to
 * stdout (which carries JSON-RPC in stdio mode). A library that prints a peer's bytes (the A2A
 * client prints a stream event it could not parse, whole) must not put a vault secret in the log;
 * a parse error among the arguments loses its quote of the text (json-error.ts), since a piece of
 * a secret matches no needle.
 */
export function routeConsole(log: Logger): void {
  const to =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (...args: unknown[]): void =>
      log[level](
        { source: 'console' },
        format(...args.map((a) => (a instanceof SyntaxError ? blindJsonError(a) : a))),
      );
  Object.assign(console, {
    log: to('info'),
    info: to('info'),
    debug: to('debug'),
    trace: to('debug'),
    warn: to('warn'),
    error: to('error'),
  });
}
