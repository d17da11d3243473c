// `switchboard pins list|diff|approve`: the operator's side of tool pinning. Approving re-pins a
// quarantined tool to the definition it now has; a running switchboard notices within a second.
import { lineDiff } from '../trust/line-diff.js';
import { PinStore, type Flag, type PinRow } from '../trust/pins-store.js';
import { processIo, type CommandIo, parseCommand } from './io.js';
import { DB_OPTIONS, openForCommand } from './trust-db-path.js';

export const PINS_USAGE = `Usage: switchboard pins <list|diff|approve> [options]

  list                        Every pinned tool: its hash, scanner flags, and whether it is quarantined
  diff <backend> <tool>       The pinned definition against the changed one the backend now serves
  approve <backend> <tool>    Re-pin the tool to its changed definition (it is served again)

Options: --db FILE (default: audit.path of --config FILE, else ~/.local/state/switchboard/audit.sqlite),
         --json (list as one JSON object per tool)`;

export async function runPins(argv: string[], io: CommandIo = processIo): Promise<number> {
  const parsed = parseCommand(
    'pins',
    PINS_USAGE,
    argv,
    { ...DB_OPTIONS, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    io,
  );
  if (!parsed) return 2;
  const { values: v, positionals } = parsed;
  const [sub, backend, tool] = positionals;
  const needsTool = sub === 'diff' || sub === 'approve';
  if (v.help || !(sub === 'list' || needsTool) || (needsTool && (!backend || !tool))) {
    (v.help ? io.out : io.err)(PINS_USAGE);
    return v.help ? 0 : 2;
  }
  const opened = await openForCommand(v);
  if (typeof opened === 'string') {
    io.err(`switchboard pins: ${opened}`);
    return 1;
  }
  const { db } = opened;
  const store = new PinStore(db);
  try {
    if (sub === 'list') {
      for (const p of store.list()) {
        if (v.json) io.out(JSON.stringify(p));
        else for (const line of describe(p)) io.out(line);
      }
      return 0;
    }
    const pin = store.get(backend!, tool!);
    if (!pin) {
      io.err(`switchboard pins: no pin for tool "${tool}" of backend "${backend}"`);
      return 1;
    }
    if (!pin.changed) {
      io.err(`${backend} ${tool}: not quarantined; its definition matches its pin (${pin.sha256})`);
      return sub === 'diff' ? 0 : 1;
    }
    if (sub === 'diff') {
      io.out(`--- pinned  sha256:${pin.sha256}  ${new Date(pin.pinnedAt).toISOString()}`);
      io.out(`+++ served  sha256:${pin.changed.sha256}  ${new Date(pin.changed.seenAt).toISOString()}`);
      for (const line of lineDiff(pretty(pin.definition), pretty(pin.changed.definition))) io.out(line);
      for (const f of pin.changed.flags) io.out(`flag ${f.kind}: ${f.reason}`);
      return 0;
    }
    store.approve(backend!, tool!);
    io.out(`${backend} ${tool}: re-pinned to sha256:${pin.changed.sha256}`);
    return 0;
  } finally {
    db.close();
  }
}

function pretty(canonical: string): string[] {
  return JSON.stringify(JSON.parse(canonical), null, 2).split('\n');
}

function describe(p: PinRow): string[] {
  const state = !p.changed
    ? 'pinned'
    : p.sha256 === ''
      ? `QUARANTINED (flagged on first sight ${new Date(p.changed.seenAt).toISOString()}; never pinned)`
      : `QUARANTINED (changed ${new Date(p.changed.seenAt).toISOString()})`;
  const lines = [`${p.backend}  ${p.tool}  sha256:${p.sha256.slice(0, 16)}  ${state}`];
  const flag = (f: Flag, when: string) => `    flag ${f.kind}${when}: ${f.reason}`;
  for (const f of p.flags) lines.push(flag(f, ''));
  for (const f of p.changed?.flags ?? []) lines.push(flag(f, ' (changed definition)'));
  return lines;
}
