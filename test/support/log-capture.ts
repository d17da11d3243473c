// A pino logger whose lines a test reads back, to see what switchboard logged.
import { Writable } from 'node:stream';
import { pino, type Level } from 'pino';
import type { Logger } from '../../src/log.js';

export interface CapturedLog {
  /** Pass it to switchboard as its log. */
  readonly logger: Logger;
  /** Everything logged so far, as written. */
  text(): string;
  /** Every line logged so far, parsed. */
  lines(): Record<string, unknown>[];
}

export function captureLog(level: Level): CapturedLog {
  const chunks: string[] = [];
  const logger = pino(
    { level },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        chunks.push(chunk.toString('utf8'));
        done();
      },
    }),
  );
  const text = () => chunks.join('');
  return {
    logger,
    text,
    lines: () =>
      text()
        .split('\n')
        .filter((line) => line.trim())
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}
