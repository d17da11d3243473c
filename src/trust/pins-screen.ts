// Pinning at the one place lists enter the catalog: each tool, prompt and resource template a
// backend lists is checked against its pin. What changed since it was pinned, what a rename put in
// a pin's place, what was flagged on first sight, and what appeared after the backend's first list
// wait for an operator: left out of the catalog (neither listed nor callable), or kept in it with
// every use needing a human's approval (the policy stage asks).
import type { Item, ListKind } from '../catalog/catalog.js';
import { matchTemplate } from '../catalog/uri-template-match.js';
import type { Logger } from '../log.js';
import { pinKeyOf, pinKindOf, pinOf, type PinKind } from './pins-definition.js';
import { findRenames } from './pins-rename.js';
import type { ScanContext } from './pins-scan.js';
import { NEVER_PINNED } from './pins-schema.js';
import type { Flag, HoldReason, PinRow, PinStore } from './pins-store.js';

export interface PinScreenOptions {
  /** What a changed (or renamed, or flagged) definition becomes until re-pinned. */
  onChange: 'hide' | 'approve';
  /** What a definition that appears after its backend's first list becomes. */
  newTools: 'show' | 'hide' | 'approve';
  /** What a definition the scanner flags on first sight becomes: pinned with its flags shown, or held. */
  flagged: 'show' | 'hide';
  log: Logger;
  /** Flags a definition on arrival (the scanner); none when absent. */
  scan?: ((item: Item, context: ScanContext) => Flag[]) | undefined;
}

/** A definition waiting for an operator, as the running switchboard treats it. */
interface Held {
  reason: HoldReason;
  /** Kept listed, each use asking for approval; else left out. */
  listed: boolean;
}

/** How much each way of holding a definition keeps from the model. */
const STRICTNESS = { show: 0, approve: 1, hide: 2 } as const;

const NOUN: Record<PinKind, string> = { tool: 'tool', prompt: 'prompt', template: 'resource template' };

export class PinScreen {
  private readonly screenList;
  /** What waits, by backend and kind, then name: replaced with each list judged. */
  private readonly held = new Map<string, Map<string, Held>>();

  constructor(
    private readonly store: PinStore,
    private readonly options: PinScreenOptions,
  ) {
    // One transaction per list: a refresh of a hundred tools is one commit, not a hundred.
    this.screenList = store.transaction((backend: string, kind: PinKind, items: Item[]) =>
      this.judgeList(backend, kind, items),
    );
  }

  /** The hook the catalog calls with every list a backend serves; concrete resources pass as they are. */
  screen = (backend: string, list: ListKind, items: Item[]): Item[] => {
    const kind = pinKindOf(list);
    if (!kind) return items;
    try {
      return this.screenList(backend, kind, items);
    } catch (err) {
      // Fails closed: a definition that cannot be checked against its pin is not served.
      this.options.log.error(
        { backend, kind, err: err instanceof Error ? err.message : String(err) },
        'pins could not be checked; withholding this list of the backend',
      );
      return [];
    }
  };

  /**
   * The rule under which a use of this target needs approval: it is held and kept listed. A read
   * answers for a held template its URI matches.
   */
  needsApproval = (backend: string, name: string, kind = 'tool'): string | undefined => {
    const pinKind: PinKind | undefined =
      kind === 'tool' ? 'tool' : kind === 'prompt' ? 'prompt' : kind === 'resource' ? 'template' : undefined;
    const held = pinKind && this.held.get(`${backend}\0${pinKind}`);
    if (!held) return undefined;
    if (pinKind !== 'template') {
      const h = held.get(name);
      return h?.listed ? ruleOf(h.reason) : undefined;
    }
    for (const [uriTemplate, h] of held)
      // A URI too long to compare with the template is taken as one of its URIs: held is held.
      if (h.listed && matchTemplate(uriTemplate, name) !== 'no') return ruleOf(h.reason);
    return undefined;
  };

  private judgeList(backend: string, kind: PinKind, items: Item[]): Item[] {
    const hadBaseline = this.store.takeBaseline(backend, kind);
    const rows = new Map(this.store.ofKind(backend, kind).map((r) => [r.name, r]));
    const present = new Set(items.map((i) => pinKeyOf(kind, i)));
    const vanished = [...rows.values()].filter(
      (r) => r.sha256 !== NEVER_PINNED && r.goneSince === undefined && !present.has(r.name),
    );
    const fresh = items.filter((i) => !rows.has(pinKeyOf(kind, i)));
    const found =
      hadBaseline && vanished.length > 0 && fresh.length > 0
        ? findRenames(
            kind,
            vanished,
            fresh.map((i) => ({ name: pinKeyOf(kind, i), definition: pinOf(kind, i).definition })),
          )
        : new Map<string, string>();
    // Too many vanished and new at once to compare: any newcomer may be a renamed pin, so each is
    // held (as a rename or as new, whichever is the stricter) rather than trusted unseen.
    const uncompared = found === undefined;
    if (uncompared)
      this.options.log.warn(
        { backend, kind, vanished: vanished.length, added: fresh.length },
        `too many ${NOUN[kind]}s renamed at once to compare with their pins; the new ones are held for review`,
      );
    const renames = found ?? new Map<string, string>();
    this.store.presence(
      backend,
      kind,
      vanished.map((r) => r.name),
      [...rows.values()].filter((r) => r.goneSince !== undefined && present.has(r.name)).map((r) => r.name),
    );

    const key = `${backend}\0${kind}`;
    const before = this.held.get(key) ?? new Map<string, Held>();
    const now = new Map<string, Held>();
    const admitted = items.filter((item) => {
      const name = pinKeyOf(kind, item);
      const reason = this.judge(
        backend,
        kind,
        item,
        rows.get(name),
        hadBaseline,
        renames.get(name),
        uncompared,
      );
      if (!reason) {
        if (before.has(name)) this.options.log.info({ backend, kind, name }, `${NOUN[kind]} re-admitted`);
        return true;
      }
      const held = { reason, listed: this.modeOf(reason) === 'approve' };
      now.set(name, held);
      if (before.get(name)?.reason !== reason) this.logHeld(backend, kind, name, held, renames.get(name));
      return held.listed;
    });
    this.held.set(key, now);
    return admitted;
  }

  /** Pins, settles or holds one definition; returns why it is held, if it is. */
  private judge(
    backend: string,
    kind: PinKind,
    item: Item,
    row: PinRow | undefined,
    hadBaseline: boolean,
    renamedFrom: string | undefined,
    /** Renames could not be looked for in this change (too large): a newcomer is held either way. */
    uncompared = false,
  ): HoldReason | undefined {
    const name = pinKeyOf(kind, item);
    const pin = pinOf(kind, item);
    if (row?.sha256 === pin.sha256) {
      this.store.settle(backend, kind, name);
      return undefined;
    }
    // Flags are worked out only for a definition that is new or changed: the common case, a
    // definition that matches its pin, costs no scan.
    const served = { ...pin, flags: this.scan(backend, kind, item, row?.firstSeen) };
    const hold = (reason: HoldReason, from?: string) => {
      this.store.hold(backend, kind, name, served, reason, from);
      return reason;
    };
    if (row && row.sha256 !== NEVER_PINNED) return hold('changed');
    // Never pinned yet: it waits for the reason it was first held for.
    if (row) return hold(row.changed?.reason ?? 'flagged', row.changed?.renamedFrom);
    if (renamedFrom !== undefined) return hold('renamed', renamedFrom);
    if (served.flags.length > 0 && this.options.flagged === 'hide') return hold('flagged');
    // It may be a renamed pin or a new definition: held as whichever of the two is held the stricter.
    if (uncompared)
      return hold(STRICTNESS[this.modeOf('renamed')] > STRICTNESS[this.modeOf('new')] ? 'renamed' : 'new');
    if (hadBaseline && this.options.newTools !== 'show') return hold('new');
    this.store.pin(backend, kind, name, served);
    if (hadBaseline)
      this.options.log[served.flags.length ? 'warn' : 'info'](
        { backend, kind, name, flags: served.flags },
        `new ${NOUN[kind]} pinned`,
      );
    else if (served.flags.length)
      this.options.log.warn(
        { backend, kind, name, flags: served.flags },
        `new ${NOUN[kind]} pinned with scanner flags`,
      );
    return undefined;
  }

  /**
   * The scanner, comparing names only with what other backends had pinned before this definition
   * was first seen: of two look-alikes, the newcomer is flagged, never the one pinned first,
   * whichever of the two lists first after a restart.
   */
  private scan(backend: string, kind: PinKind, item: Item, firstSeen: number | undefined): Flag[] {
    if (!this.options.scan) return [];
    const others = this.store.pinnedBefore(kind, backend, firstSeen ?? Number.MAX_SAFE_INTEGER);
    return this.options.scan(item, { others });
  }

  private modeOf(reason: HoldReason): 'hide' | 'approve' | 'show' {
    return reason === 'new' ? this.options.newTools : this.options.onChange;
  }

  private logHeld(backend: string, kind: PinKind, name: string, held: Held, renamedFrom?: string): void {
    const why = {
      changed: 'changed since pinned',
      flagged: 'flagged by the scanner on first sight',
      new: 'new since its backend was first pinned',
      renamed: `a near copy of the pinned "${renamedFrom ?? '?'}" under another name`,
    }[held.reason];
    const kindFlag = kind === 'tool' ? '' : ` --kind ${kind}`;
    this.options.log.warn(
      { backend, kind, name, reason: held.reason, ...(renamedFrom && { renamedFrom }) },
      `${NOUN[kind]} quarantined (${why}); ${held.listed ? 'each use needs approval' : 'hidden'} until re-pinned: switchboard pins diff ${backend} ${JSON.stringify(name).slice(1, -1)}${kindFlag}`,
    );
  }
}

function ruleOf(reason: HoldReason): string {
  return reason === 'new' ? 'pinning.newTools' : 'pinning.onChange';
}
