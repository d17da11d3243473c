// `switchboard pins list|diff|approve`: the operator's side of pinning. Approving pins a held
// tool, prompt or template to the definition it now has; a running switchboard notices within a second.
import { pinDiff } from '../trust/pin-diff.js';
import { PIN_KINDS } from '../trust/pins-definition.js';
import { PinStore, type Flag, type PinRow } from '../trust/pins-store.js';
import { processIo, type CommandIo, parseCommand } from './io.js';
import { DB_OPTIONS, openForCommand } from './trust-db-path.js';

export const PINS_USAGE = `Usage: switchboard pins <list|diff|approve> [options]

  list                        Every pin (tools, prompts, templates): its hash, scanner flags, and
                              whether it is quarantined, and why
  diff <backend> <name>       The pinned definition against the one the backend now serves
  approve <backend> <name>    Pin it to the definition it now serves (it is served again)

A name is a tool's or prompt's name, or a template's URI template.
Options: --kind tool|prompt|template (needed when a backend has two kinds under one name),
         --db FILE (default: audit.path of --config FILE, else $XDG_STATE_HOME/switchboard/audit.sqlite,
         ~/.local/state/switchboard/audit.sqlite without it),
         --json (list as one JSON object per pin)`;

export async function runPins(argv: string[], io: CommandIo = processIo): Promise<number> {
  const parsed = parseCommand(
    'pins',
    PINS_USAGE,
    argv,
    {
      ...DB_OPTIONS,
      kind: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    io,
  );
  if (!parsed) return 2;
  const { values: v, positionals } = parsed;
  const [sub, backend, name] = positionals;
  const needsName = sub === 'diff' || sub === 'approve';
  const kindOk = v.kind === undefined || (PIN_KINDS as readonly string[]).includes(v.kind);
  if (v.help || !(sub === 'list' || needsName) || (needsName && (!backend || !name)) || !kindOk) {
    (v.help ? io.out : io.err)(PINS_USAGE);
    return v.help ? 0 : 2;
  }
  const opened = await openForCommand(v);
  if (typeof opened === 'string') {
    io.err(`switchboard pins: ${opened}`);
    return 1;
  }
  const { db, path } = opened;
  const store = new PinStore(db);
  try {
    if (sub === 'list') {
      const pins = store.list();
      const listed = pins.filter((p) => v.kind === undefined || p.kind === v.kind);
      for (const p of listed) {
        if (v.json) io.out(JSON.stringify(p));
        else for (const line of describe(p)) io.out(line);
      }
      // An empty list says why it may be empty, on stderr (stdout stays what a script reads).
      if (listed.length === 0)
        io.err(
          pins.length > 0
            ? `no ${v.kind} pins in ${path}`
            : `no pins in ${path}: a switchboard with pinning.enabled: true pins each definition when it first lists it, in the trust database of its state directory (--db names another)`,
        );
      return 0;
    }
    const found = PIN_KINDS.filter((k) => v.kind === undefined || k === v.kind)
      .map((k) => store.get(backend!, name!, k))
      .filter((p): p is PinRow => p !== undefined);
    if (found.length !== 1) {
      io.err(
        found.length === 0
          ? `switchboard pins: no pin for "${name}" of backend "${backend}"${v.kind ? ` (${v.kind})` : ''}`
          : `switchboard pins: "${name}" of backend "${backend}" is a ${found.map((p) => p.kind).join(' and a ')}; say which with --kind`,
      );
      return 1;
    }
    const pin = found[0]!;
    const label = `${backend} ${pin.kind} ${name}`;
    if (!pin.changed) {
      io.err(`${label}: not quarantined; its definition matches its pin (${pin.sha256})`);
      return sub === 'diff' ? 0 : 1;
    }
    if (sub === 'diff') {
      for (const line of diff(store, pin, pin.changed)) io.out(line);
      return 0;
    }
    store.approve(backend!, name!, pin.kind);
    io.out(`${label}: pinned to sha256:${pin.changed.sha256}`);
    if (pin.changed.renamedFrom !== undefined)
      io.out(`  (it replaces the pin of "${pin.changed.renamedFrom}", which is dropped)`);
    return 0;
  } finally {
    db.close();
  }
}

/** The pinned definition (for a rename, the one it replaced) against the served one, line by line. */
function diff(store: PinStore, pin: PinRow, changed: NonNullable<PinRow['changed']>): string[] {
  const { pinned, renamed, lines: body } = pinDiff(store, pin, changed);
  const lines = [
    pinned
      ? `--- pinned  sha256:${pinned.sha256}  ${new Date(pinned.pinnedAt).toISOString()}${renamed ? `  (as "${pinned.name}")` : ''}`
      : `--- pinned  (none: ${why(changed)})`,
    `+++ served  sha256:${changed.sha256}  ${new Date(changed.seenAt).toISOString()}`,
    ...body,
  ];
  for (const f of changed.flags) lines.push(`flag ${f.kind}: ${f.reason}`);
  return lines;
}

function why(c: NonNullable<PinRow['changed']>): string {
  const at = new Date(c.seenAt).toISOString();
  switch (c.reason) {
    case 'changed':
      return `changed ${at}`;
    case 'flagged':
      return `flagged on first sight ${at}; never pinned`;
    case 'new':
      return `new since the backend was first pinned ${at}; never pinned`;
    case 'renamed':
      return `renamed from "${c.renamedFrom ?? '?'}" ${at}; never pinned`;
  }
}

function describe(p: PinRow): string[] {
  const state = p.changed
    ? `QUARANTINED (${why(p.changed)})`
    : p.goneSince !== undefined
      ? `pinned (not listed since ${new Date(p.goneSince).toISOString()})`
      : 'pinned';
  const lines = [`${p.backend}  ${p.name}  ${p.kind}  sha256:${p.sha256.slice(0, 16)}  ${state}`];
  const flag = (f: Flag, when: string) => `    flag ${f.kind}${when}: ${f.reason}`;
  for (const f of p.flags) lines.push(flag(f, ''));
  for (const f of p.changed?.flags ?? []) lines.push(flag(f, ' (changed definition)'));
  return lines;
}
