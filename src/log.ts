// Structured logging to stderr (stdout carries JSON-RPC in stdio mode).
import { pino, type Logger as PinoLogger } from 'pino';

export type Logger = Pick<PinoLogger, 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'child'>;

export function createLogger(level: string = process.env.SWITCHBOARD_LOG_LEVEL ?? 'info'): Logger {
  return pino({ level, base: undefined, timestamp: pino.stdTimeFunctions.isoTime }, pino.destination(2));
}

/** A logger that drops everything: the default where a caller passes none (tests, library use). */
export const silentLogger: Logger = pino({ level: 'silent' });
