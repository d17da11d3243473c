// Whether a large string kept as bytes (RawText) may hold a needle, asked of its bytes rather
// than its text. The bytes are the string as JSON.stringify writes it (wire-parse.ts), so a
// needle anywhere in the text is, in the bytes, that needle as JSON.stringify writes it: looking
// for those forms misses nothing. A hit may still be a false alarm (found across an escape);
// the redactor then decodes the text and redacts it as any other.
import type { RawText } from '../encoding/raw-text.js';
import { ByteLine } from '../encoding/byte-line.js';
import { LiteralScan } from './literal-scan.js';

/** Up to this many needles, each is looked for with one native search; past it, in one pass. */
const ONE_BY_ONE = 16;

export class RawScan {
  private readonly forms: Buffer[];
  /** The longest form: how far either side of a chunk's edge an occurrence may reach. */
  private readonly longest: number;
  private scan: LiteralScan | undefined;

  constructor(needles: Iterable<string>) {
    const forms = new Set<string>();
    for (const needle of needles) forms.add(JSON.stringify(needle).slice(1, -1));
    this.forms = [...forms].map((form) => Buffer.from(form));
    this.longest = Math.max(0, ...this.forms.map((form) => form.length));
  }

  mayHold(raw: RawText): boolean {
    const chunks = raw.chunks;
    for (const chunk of chunks) if (this.holds(chunk)) return true;
    if (chunks.length < 2) return false;
    // An occurrence across the edge between two chunks lies within `longest - 1` bytes of it.
    const line = new ByteLine(chunks);
    const reach = this.longest - 1;
    let edge = 0;
    for (let i = 0; i < chunks.length - 1; i++) {
      edge += chunks[i]!.length;
      const window = line.slice(Math.max(0, edge - reach), Math.min(line.length, edge + reach));
      if (this.holds(Buffer.concat(window))) return true;
    }
    return false;
  }

  private holds(bytes: Buffer): boolean {
    if (this.forms.length <= ONE_BY_ONE) return this.forms.some((form) => bytes.includes(form));
    // Many needles: one skipping pass over the bytes read as Latin-1 (one character a byte), for
    // the needles' UTF-8 bytes read the same way.
    this.scan ??= new LiteralScan(new Map(this.forms.map((form) => [form.toString('latin1'), ''])));
    const text = bytes.toString('latin1');
    return this.scan.replace(text) !== text;
  }
}
