// Shared by the pinning attack tests: a morphing backend's entry, the names switchboard lists of
// each kind, and `switchboard pins` run against the test's database file.
import { fileURLToPath } from 'node:url';
import type { MorphSpec } from '../fixtures/morphing-server.js';
import type { ListKind } from '../../src/catalog/catalog.js';
import type { Switchboard } from '../../src/switchboard.js';
import { runPins } from '../../src/cli/pins.js';
import { captureIo } from '../trust/helpers.js';

export const MORPHING = fileURLToPath(new URL('../fixtures/morphing-server.js', import.meta.url));

/** A backend serving exactly these definitions (and its `morph` tool, which replaces them). */
export function morphing(spec: MorphSpec) {
  return { command: process.execPath, args: [MORPHING, '--spec', JSON.stringify(spec)] };
}

/** What a host is offered of one kind, by exposed name (templates by URI template), sorted. */
export function listed(sb: Switchboard, kind: ListKind): string[] {
  const field = kind === 'resourceTemplates' ? 'uriTemplate' : 'name';
  const key = kind === 'resourceTemplates' ? 'resourceTemplates' : kind;
  const items = sb.gateway.catalog.list(kind)[key] as Record<string, unknown>[];
  return items.map((i) => String(i[field])).sort();
}

/** Runs `switchboard pins <args> --db <path>`; its exit code and what it printed. */
export async function pins(path: string, ...args: string[]): Promise<{ code: number; out: string }> {
  const io = captureIo();
  const code = await runPins([...args, '--db', path], io.io);
  return { code, out: [...io.out, ...io.err].join('\n') };
}
