// Tool pinning at the one place lists enter the catalog: each tool a backend lists is checked
// against its pin, and a tool whose definition changed since it was pinned is quarantined until an
// operator re-pins it: left out of the catalog (neither listed nor callable), or with
// onChange: approve kept in it with every call needing a human's approval (the policy stage asks).
import type { Item, ListKind } from '../catalog/catalog.js';
import type { Logger } from '../log.js';
import { pinOf } from './pins-definition.js';
import type { ScanContext } from './pins-scan.js';
import type { Flag, PinStore } from './pins-store.js';
import type { TrustDb } from './trust-db.js';

export interface PinScreenOptions {
  onChange: 'hide' | 'approve';
  /** What a tool the scanner flags on first sight becomes: pinned with its flags shown, or quarantined. */
  flagged: 'show' | 'hide';
  log: Logger;
  /** Flags a definition on arrival (the scanner); none when absent. */
  scan?: ((item: Item, context: ScanContext) => Flag[]) | undefined;
}

export class PinScreen {
  private readonly screenTools;
  private readonly quarantined = new Set<string>();
  /** The tools each backend last listed: what the scanner compares names against. */
  private readonly seen = new Map<string, string[]>();

  constructor(
    db: TrustDb,
    private readonly store: PinStore,
    private readonly options: PinScreenOptions,
  ) {
    // One transaction per list: a refresh of a hundred tools is one commit, not a hundred.
    this.screenTools = db.transaction((backend: string, items: Item[]) =>
      items.filter((item) => this.admit(backend, item)),
    );
  }

  /** The hook the catalog calls with every list a backend serves; only tools are pinned. */
  screen = (backend: string, kind: ListKind, items: Item[]): Item[] => {
    if (kind !== 'tools') return items;
    this.seen.set(
      backend,
      items.map((i) => String(i.name)),
    );
    try {
      return this.screenTools.immediate(backend, items);
    } catch (err) {
      // Fails closed: a tool that cannot be checked against its pin is not served.
      this.options.log.error(
        { backend, err: err instanceof Error ? err.message : String(err) },
        'tool pins could not be checked; withholding this backend’s tools',
      );
      return [];
    }
  };

  /** Whether calls to this tool need approval: it is quarantined, and kept listed (onChange: approve). */
  needsApproval = (backend: string, tool: string): boolean =>
    this.options.onChange === 'approve' && this.quarantined.has(`${backend}\0${tool}`);

  private othersThan(backend: string): Map<string, string[]> {
    const others = new Map(this.seen);
    others.delete(backend);
    return others;
  }

  private admit(backend: string, item: Item): boolean {
    const tool = String(item.name);
    const pin = pinOf(item);
    let flags: Flag[] = [];
    const scan = () => (flags = this.options.scan?.(item, { others: this.othersThan(backend) }) ?? []);
    const verdict = this.store.check(backend, tool, { ...pin, flags: scan }, this.options.flagged === 'hide');
    const key = `${backend}\0${tool}`;
    if (verdict !== 'changed') {
      if (this.quarantined.delete(key)) this.options.log.info({ backend, tool }, 'tool re-admitted');
      if (verdict === 'new' && flags.length)
        this.options.log.warn({ backend, tool, flags }, 'new tool pinned with scanner flags');
      return true;
    }
    if (!this.quarantined.has(key)) {
      this.quarantined.add(key);
      this.options.log.warn(
        {
          backend,
          tool,
          pinned: this.store.get(backend, tool)?.sha256 || 'none (flagged on arrival)',
          now: pin.sha256,
          flags,
        },
        `tool quarantined (changed since pinned, or flagged); ${this.options.onChange === 'approve' ? 'each call needs approval' : 'hidden'} until re-pinned: switchboard pins diff ${backend} ${tool}`,
      );
    }
    return this.options.onChange === 'approve';
  }
}
