// Shared setup of the workflow tests: the fixture backend, a switchboard with workflows, a host.
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { ConfigInput } from '../../src/config/schema.js';
import type { Switchboard } from '../../src/switchboard.js';
import { startGateway } from '../support/start-switchboard.js';

export const WORKFLOW_SERVER = fileURLToPath(new URL('../fixtures/workflow-server.js', import.meta.url));

export interface Setup {
  sb: Switchboard;
  dir: string;
  journal: string;
  /** The lines the fixture wrote so far. */
  lines(): string[];
}

export function fixture(journal: string) {
  const dir = journal.slice(0, journal.lastIndexOf('/'));
  return {
    command: process.execPath,
    args: [WORKFLOW_SERVER, '--journal', journal],
    sandbox: { write: [dir] },
  };
}

export function journalLines(journal: string): string[] {
  return existsSync(journal) ? readFileSync(journal, 'utf8').split('\n').filter(Boolean) : [];
}

/** Switchboard with the fixture as server `fx` and these workflows; state and audit in a temp dir. */
export async function setup(
  t: TestContext,
  input: Omit<ConfigInput, 'servers'> & { servers?: ConfigInput['servers'] },
): Promise<Setup> {
  const dir = mkdtempSync(join(tmpdir(), 'sb-workflows-'));
  const journal = join(dir, 'journal.log');
  const sb = await startGateway(t, {
    namespacing: { mode: 'always' },
    ...input,
    servers: { fx: fixture(journal), ...input.servers },
    state: { path: join(dir, 'state.sqlite') },
    audit: { enabled: true, path: join(dir, 'audit.sqlite'), ...input.audit },
  });
  return { sb, dir, journal, lines: () => journalLines(journal) };
}
