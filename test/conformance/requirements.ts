// Which conformance requirement sets the runner runs, and which server scenarios each one names.
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

import { parse } from 'yaml';

/**
 * The sets `npm run conformance` runs when none is asked for: every revision the fixture
 * implements. Each set runs on its own wire, as the suite requires; which targets each set runs
 * against is the matrix in matrix.ts.
 */
export const DEFAULT_REQUIREMENT_SETS = ['2025-11-25', '2026-07-28'] as const;

/**
 * Not-scored scenarios whose failures still fail our run. The suite scores neither, but the fixture
 * passes `pending` and `added-after-release` scenarios directly, so through the gateway a failure
 * there is fidelity the gateway lost. `extension` scenarios (tasks, …) are optional by definition
 * (SEP-1730) and the fixture implements none, so they are reported and not counted.
 */
export const COUNTED_NOT_SCORED_REASONS: ReadonlySet<string> = new Set(['pending', 'added-after-release']);

export interface RequirementSet {
  readonly name: string;
  /** Server scenarios the revision requires: they decide the suite's own verdict. */
  readonly scored: readonly string[];
  /** Server scenarios the suite runs and reports without scoring, with the reason it gives. */
  readonly notScored: ReadonlyMap<string, string>;
}

interface RequirementsFile {
  server?: string[];
  not_scored?: { scenario: string; leg: string; reason: string }[];
}

/** The installed suite's package directory: its CLI and its frozen requirement files live there. */
export function conformancePackageDir(): string {
  const require = createRequire(import.meta.url);
  return dirname(require.resolve('@modelcontextprotocol/conformance/package.json'));
}

export function availableRequirementSets(): string[] {
  return readdirSync(join(conformancePackageDir(), 'requirements'))
    .filter((file) => file.endsWith('.yaml'))
    .map((file) => file.slice(0, -'.yaml'.length))
    .sort();
}

/** Reads the set from the installed suite, so the scenario list always matches the suite that runs it. */
export function loadRequirementSet(name: string): RequirementSet {
  const available = availableRequirementSets();
  if (!available.includes(name)) {
    throw new Error(`unknown requirement set ${name}; the installed suite has: ${available.join(', ')}`);
  }
  const file = parse(
    readFileSync(join(conformancePackageDir(), 'requirements', `${name}.yaml`), 'utf8'),
  ) as RequirementsFile;
  const notScored = new Map<string, string>();
  for (const entry of file.not_scored ?? []) {
    if (entry.leg === 'server') notScored.set(entry.scenario, entry.reason);
  }
  return { name, scored: file.server ?? [], notScored };
}
