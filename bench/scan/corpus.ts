// The scanner corpus as labelled cases: poisoned definitions from public research, and the real
// definitions of popular MCP servers, each case in a fixed split (held-in for tuning, held-out for
// the honest figure) decided by a hash of its id, so adding cases never moves the others.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../lib/paths.js';

export const CORPUS_DIR = join(ROOT, 'bench', 'fixtures', 'scanner-corpus');

/** The share of cases held out: those whose id hashes below this fraction of the byte range. */
const HELD_OUT_SHARE = 0.3;

export type Split = 'held-in' | 'held-out';

export interface Case {
  id: string;
  label: 'poisoned' | 'benign';
  split: Split;
  /** The backend that serves it; benign cases are scanned beside every other server. */
  server: string;
  item: Record<string, unknown>;
  source: string;
}

export function splitOf(id: string): Split {
  const first = createHash('sha256').update(id).digest()[0]!;
  return first < 256 * HELD_OUT_SHARE ? 'held-out' : 'held-in';
}

interface PoisonedEntry {
  id: string;
  split: Split;
  source: Record<string, string>;
  tool: Record<string, unknown>;
}

interface ServerEntry {
  package: string;
  version: string;
  tools: Record<string, unknown>[];
  prompts: {
    name: string;
    title?: string;
    description?: string;
    arguments?: { name: string; description?: string }[];
  }[];
}

export function poisonedCases(): Case[] {
  const file = JSON.parse(readFileSync(join(CORPUS_DIR, 'poisoned.json'), 'utf8')) as {
    entries: PoisonedEntry[];
  };
  return file.entries.map((e) => {
    // The stored split is for readers of the data; the hash decides, and a mismatch is an edited file.
    if (e.split !== splitOf(e.id))
      throw new Error(`poisoned.json: ${e.id} says ${e.split}, its hash says ${splitOf(e.id)}`);
    return {
      id: e.id,
      label: 'poisoned' as const,
      split: e.split,
      server: `poisoned:${e.id}`,
      item: e.tool,
      source: [e.source.repo, e.source.path, e.source.paper].filter(Boolean).join(' — '),
    };
  });
}

/** A prompt scanned as a definition: its arguments read like a tool's parameters. */
function promptAsItem(p: ServerEntry['prompts'][number]): Record<string, unknown> {
  const properties = Object.fromEntries(
    (p.arguments ?? []).map((a) => [
      a.name,
      a.description ? { type: 'string', description: a.description } : { type: 'string' },
    ]),
  );
  return {
    name: p.name,
    title: p.title,
    description: p.description,
    inputSchema: { type: 'object', properties },
  };
}

export function benignCases(): Case[] {
  const file = JSON.parse(readFileSync(join(CORPUS_DIR, 'benign-servers.json'), 'utf8')) as {
    servers: ServerEntry[];
  };
  return file.servers.flatMap((s) =>
    [
      ...s.tools.map((t) => ({ kind: 'tool', item: t })),
      ...s.prompts.map((p) => ({ kind: 'prompt', item: promptAsItem(p) })),
    ].map(({ kind, item }) => {
      const id = `${s.package}/${kind}/${String(item.name)}`;
      return {
        id,
        label: 'benign' as const,
        split: splitOf(id),
        server: s.package,
        item,
        source: `npm ${s.package}@${s.version}`,
      };
    }),
  );
}

/** Every other server's tool names, for a case: the whole benign set runs as one catalog. */
export function othersOf(server: string, cases: readonly Case[]): Map<string, string[]> {
  const others = new Map<string, string[]>();
  for (const c of cases) {
    if (c.label !== 'benign' || c.server === server || c.id.includes('/prompt/')) continue;
    others.set(c.server, [...(others.get(c.server) ?? []), String(c.item.name)]);
  }
  return others;
}
