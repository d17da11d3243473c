// The last lines a backend wrote on stderr, kept so that a failure can show them (the start error,
// `switchboard validate`, the gateway's per-backend state). Bounded in lines and bytes.
export const TAIL_LINES = 20;
export const TAIL_BYTES = 4096;

/** npm's own chatter when a backend runs through npx: not the server's voice, logged at debug. */
export function isNpmNoise(line: string): boolean {
  return /^npm (warn|WARN|notice)\b/.test(line);
}

export class StderrTail {
  private readonly kept: string[] = [];
  private bytes = 0;

  /** A line already redacted (the channel that read it did). */
  push(line: string): void {
    let text = line;
    if (text.length > TAIL_BYTES) text = `${text.slice(0, TAIL_BYTES - 1)}…`;
    this.kept.push(text);
    this.bytes += text.length;
    while (this.kept.length > TAIL_LINES || this.bytes > TAIL_BYTES) this.bytes -= this.kept.shift()!.length;
  }

  /** Oldest first. */
  get lines(): readonly string[] {
    return [...this.kept];
  }
}
