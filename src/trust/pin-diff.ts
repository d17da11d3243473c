// How a quarantined tool, prompt or template differs from its pin: the one comparison both
// `switchboard pins diff` and the dashboard's quarantine view print.
import { lineDiff } from './line-diff.js';
import { NEVER_PINNED } from './pins-schema.js';
import type { PinRow, PinStore } from './pins-store.js';

export interface PinDiff {
  /** The pinned row judged against: the item's own, or for a rename the one it replaced; absent if never pinned. */
  pinned: PinRow | undefined;
  /** True when the served item is judged against another name's pin (a rename). */
  renamed: boolean;
  /** The pinned definition against the served one, each line marked ' ', '-' or '+'. */
  lines: string[];
}

export function pinDiff(store: PinStore, pin: PinRow, changed: NonNullable<PinRow['changed']>): PinDiff {
  // A rename is judged against the definition it replaced.
  const original =
    changed.renamedFrom !== undefined ? store.get(pin.backend, changed.renamedFrom, pin.kind) : pin;
  const pinned = original && original.sha256 !== NEVER_PINNED ? original : undefined;
  return {
    pinned,
    renamed: original !== pin,
    lines: lineDiff(pinned ? pretty(pinned.definition) : [], pretty(changed.definition)),
  };
}

/** A canonical (compact) definition, indented so a diff shows one field per line. */
function pretty(canonical: string): string[] {
  return JSON.stringify(JSON.parse(canonical), null, 2).split('\n');
}
