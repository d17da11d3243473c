// `npm run bench -- scan [--hide-held-out]`: the definition scanner against its labelled corpus.
// Prints corpus sizes, detection and false-positive rates (held-out and overall) and every miss;
// --hide-held-out keeps held-out misses from view while rules are being tuned.
import { scanDefinition } from '../../src/trust/pins-scan.js';
import { benignCases, othersOf, poisonedCases, type Case } from './corpus.js';

interface Outcome {
  case: Case;
  flagged: boolean;
  reasons: string[];
}

function rate(outcomes: readonly Outcome[], split?: Case['split']): string {
  const picked = outcomes.filter((o) => split === undefined || o.case.split === split);
  const hits = picked.filter((o) => o.flagged).length;
  const pct = picked.length === 0 ? 0 : (100 * hits) / picked.length;
  return `${pct.toFixed(1)}% (${hits}/${picked.length})`;
}

export function runScanBench(argv: readonly string[]): number {
  const hideHeldOut = argv.includes('--hide-held-out');
  const poisoned = poisonedCases();
  const benign = benignCases();
  const none = new Map<string, string[]>();
  // Poisoned cases are scanned beside the benign catalog, as a new server joining it would be.
  const catalog = othersOf('', benign);
  const scan = (c: Case, others: Map<string, string[]>): Outcome => {
    const flags = scanDefinition(c.item, { others });
    return { case: c, flagged: flags.length > 0, reasons: flags.map((f) => `${f.kind}: ${f.reason}`) };
  };
  const p = poisoned.map((c) => scan(c, catalog));
  const b = benign.map((c) => scan(c, othersOf(c.server, benign)));
  const alone = poisoned.map((c) => scan(c, none));

  const servers = new Set(benign.map((c) => c.server)).size;
  const out: string[] = [
    'definition scanner benchmark',
    `  corpus: ${poisoned.length} poisoned (${poisoned.filter((c) => c.split === 'held-out').length} held out), ` +
      `${benign.length} benign definitions from ${servers} npm servers (${benign.filter((c) => c.split === 'held-out').length} held out)`,
    `  detection (poisoned flagged):   held-out ${rate(p, 'held-out')}   overall ${rate(p)}`,
    `  detection without the catalog:  held-out ${rate(alone, 'held-out')}   overall ${rate(alone)}`,
    `  false positives (benign flagged, all servers as one catalog): held-out ${rate(b, 'held-out')}   overall ${rate(b)}`,
  ];
  const show = (o: Outcome) => !hideHeldOut || o.case.split === 'held-in';
  const missed = p.filter((o) => !o.flagged && show(o));
  out.push('', `missed poisoned (${missed.length}${hideHeldOut ? ', held-in only' : ''}):`);
  for (const o of missed) out.push(`  [${o.case.split}] ${o.case.id} (${o.case.source})`);
  const fps = b.filter((o) => o.flagged && show(o));
  out.push('', `flagged benign (${fps.length}${hideHeldOut ? ', held-in only' : ''}):`);
  for (const o of fps) out.push(`  [${o.case.split}] ${o.case.id}`, ...o.reasons.map((r) => `      ${r}`));
  process.stdout.write(out.join('\n') + '\n');
  return 0;
}
