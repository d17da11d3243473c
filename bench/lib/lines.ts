// NDJSON framing for the bench's floor processes: each line of a stream, as text.
import type { Readable } from 'node:stream';

/** Calls `each` with every line of `stream` (without its newline). */
export function eachLine(stream: Readable, each: (line: string) => void): void {
  let held: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => {
    let start = 0;
    for (let nl = chunk.indexOf(10); nl !== -1; nl = chunk.indexOf(10, start)) {
      held.push(chunk.subarray(start, nl));
      const line = held.length === 1 ? held[0]! : Buffer.concat(held);
      held = [];
      start = nl + 1;
      each(line.toString('utf8'));
    }
    if (start < chunk.length) held.push(chunk.subarray(start));
  });
}
