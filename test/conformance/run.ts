// `npm run conformance`: the official MCP conformance suite against the fixture, directly or through switchboard.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

import { directRun, eraOf, isCrossEra, MATRIX, type PlannedRun } from './matrix.js';
import { ensureNode22 } from './node22.js';
import { stopAllChildren } from './processes.js';
import {
  COUNTED_NOT_SCORED_REASONS,
  DEFAULT_REQUIREMENT_SETS,
  loadRequirementSet,
  type RequirementSet,
} from './requirements.js';
import { runSuite, type SuiteRun } from './suite.js';

const PENDING_ENV = 'SWITCHBOARD_CONFORMANCE_PENDING';

const USAGE = `usage: node dist/test/conformance/run.js [--direct] [--only stdio|http] [--target <name>]...
                                        [--requirements <set>]... [--pending] [--list] [--verbose]

  (default)            every run of the matrix that is not pending (--list shows it)
  --direct             each set against the fixture alone, in the set's era (proves the fixture)
  --only stdio|http    only runs whose fixture is switchboard's stdio (or HTTP) backend
  --target NAME        only runs against this target (repeatable)
  --requirements SET   only this requirement set (repeatable; default ${DEFAULT_REQUIREMENT_SETS.join(', ')})
  --pending            also the runs waiting for switchboard features (or ${PENDING_ENV}=1)
  --list               print the selected runs and their exclusions, run nothing
  --verbose            stream the suite's and the children's output`;

const SUITE_TIMEOUT_MS = 10 * 60_000;

interface Tally {
  passed: number;
  failed: number;
}

async function main(): Promise<number> {
  let args;
  try {
    args = parseArgs({
      options: {
        direct: { type: 'boolean', default: false },
        only: { type: 'string' },
        target: { type: 'string', multiple: true },
        requirements: { type: 'string', multiple: true },
        pending: { type: 'boolean', default: process.env[PENDING_ENV] === '1' },
        list: { type: 'boolean', default: false },
        verbose: { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
      },
      strict: true,
    }).values;
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  if (args.help) {
    console.log(USAGE);
    return 0;
  }
  if (args.only !== undefined && (args.direct || !['stdio', 'http'].includes(args.only))) {
    console.error(`--only takes stdio or http, and does not combine with --direct\n${USAGE}`);
    return 2;
  }

  const sets = new Map(
    (args.requirements ?? [...DEFAULT_REQUIREMENT_SETS]).map((name) => [name, loadRequirementSet(name)]),
  );
  const selected = (args.direct ? [...sets.keys()].map(directRun) : MATRIX).filter(
    (planned) =>
      sets.has(planned.set) &&
      (args.only === undefined || planned.target.backend === args.only) &&
      (args.target === undefined || args.target.includes(planned.target.name)),
  );
  const runs = selected.filter((planned) => args.pending || planned.pending === undefined);
  const skipped = selected.filter((planned) => !runs.includes(planned));
  if (args.list) {
    for (const planned of selected) printPlan(planned, sets.get(planned.set)!);
    return 0;
  }
  if (runs.length === 0) {
    console.error(`no run matches the selection\n${USAGE}`);
    return 2;
  }

  const node = await ensureNode22();
  const workDir = mkdtempSync(join(tmpdir(), 'switchboard-conformance-'));
  const total: Tally = { passed: 0, failed: 0 };
  for (const planned of runs) {
    const tally = await runOne(planned, sets.get(planned.set)!, node, workDir, args.verbose);
    total.passed += tally.passed;
    total.failed += tally.failed;
  }
  if (skipped.length > 0) console.log('');
  for (const planned of skipped) {
    console.log(`-- ${labelOf(planned)}: pending (${planned.pending}); --pending runs it`);
  }

  if (total.failed > 0) console.log(`\nchecks and results kept in ${workDir}`);
  else rmSync(workDir, { recursive: true, force: true });
  // Read by CI: keep this exact form.
  console.log(`conformance: ${total.passed} passed, ${total.failed} failed`);
  return total.failed > 0 ? 1 : 0;
}

function labelOf(planned: PlannedRun): string {
  const crossEra = isCrossEra(planned.set, planned.target);
  return `${planned.target.name} @ ${planned.set}${crossEra ? ' (cross-era)' : ''}`;
}

function printPlan(planned: PlannedRun, set: RequirementSet): void {
  const all = [...set.scored, ...set.notScored.keys()];
  const runsCount = all.filter((scenario) => !planned.excluded.has(scenario)).length;
  const state = planned.pending === undefined ? 'runs' : `pending: ${planned.pending}`;
  console.log(
    `${labelOf(planned)}: ${planned.target.description}; ${runsCount}/${all.length} scenarios; ${state}`,
  );
  for (const [scenario, reason] of planned.excluded) {
    if (all.includes(scenario)) console.log(`   excluded ${scenario}: ${reason}`);
  }
}

/** One suite run against one freshly started target; every process it started is stopped before it returns. */
async function runOne(
  planned: PlannedRun,
  set: RequirementSet,
  node: string,
  workDir: string,
  verbose: boolean,
): Promise<Tally> {
  const { target, excluded } = planned;
  const label = labelOf(planned);
  console.log(`\n== ${label}: ${target.description}`);
  const all = [...set.scored, ...set.notScored.keys()];
  const scenarios = excluded.size === 0 ? undefined : all.filter((scenario) => !excluded.has(scenario));
  if (scenarios !== undefined) {
    const names = all.filter((scenario) => excluded.has(scenario));
    console.log(`   not run, the backend's era cannot express them (--list says why): ${names.join(', ')}`);
  }
  try {
    let url: string;
    try {
      url = await target.start(workDir, { verbose, hostEra: eraOf(set.name) });
    } catch (error) {
      // Counted as one failure so the summary line can never read "0 failed" for a run that did not happen.
      console.log(`   could not start: ${(error as Error).message}`);
      return { passed: 0, failed: 1 };
    }
    console.log(`   suite → ${url}`);
    const outputDir = join(workDir, `${target.name}-${set.name}`);
    const run = await runSuite({
      node,
      url,
      set,
      outputDir,
      timeoutMs: SUITE_TIMEOUT_MS,
      verbose,
      scenarios,
    });
    return report(label, run, outputDir);
  } finally {
    await stopAllChildren();
  }
}

/**
 * Counts checks, not scenarios: SUCCESS passes, FAILURE fails, and a scenario that left no result
 * fails once. Not-scored scenarios count too unless their reason is outside
 * COUNTED_NOT_SCORED_REASONS (see there why); those are named in one line and not counted.
 */
function report(label: string, run: SuiteRun, outputDir: string): Tally {
  const tally: Tally = { passed: 0, failed: run.missing.length };
  const failures: string[] = [];
  const warnings: string[] = [];
  const uncounted = new Set<string>();
  for (const { scenario, notScoredReason, checks } of run.scenarios) {
    const counted = notScoredReason === undefined || COUNTED_NOT_SCORED_REASONS.has(notScoredReason);
    const note = notScoredReason === undefined ? '' : ` [not scored: ${notScoredReason}]`;
    for (const check of checks) {
      const line = `${scenario}:${check.id}${note} — ${check.errorMessage ?? check.description ?? check.name}`;
      if (!counted) {
        if (check.status === 'FAILURE') uncounted.add(`${scenario} (${notScoredReason})`);
      } else if (check.status === 'SUCCESS') tally.passed += 1;
      else if (check.status === 'FAILURE') {
        tally.failed += 1;
        failures.push(line);
      } else if (check.status === 'WARNING') warnings.push(line);
    }
  }
  for (const scenario of run.missing) failures.push(`${scenario} — recorded no result`);
  // The suite's exit code covers scored scenarios only; if it failed without a failing check we
  // could read, the run is broken in a way the files do not show.
  if (run.exitCode !== 0 && tally.failed === 0) {
    tally.failed += 1;
    failures.push(`the suite exited ${run.exitCode} without a failing check\n${run.output.trim()}`);
  }

  console.log(`   ${run.scenarios.length} scenarios: ${tally.passed} passed, ${tally.failed} failed`);
  for (const line of failures) console.log(`   FAIL ${line}`);
  for (const line of warnings) console.log(`   WARN ${line}`);
  if (uncounted.size > 0) console.log(`   failing, not counted: ${[...uncounted].join(', ')}`);
  if (failures.length > 0) console.log(`   details: ${outputDir}/server-<scenario>-<time>/checks.json`);
  console.log(`${label}: ${tally.passed} passed, ${tally.failed} failed`);
  return tally;
}

// Interrupted runs still stop their children; the exit hook in processes.ts is the last resort.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void stopAllChildren().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  });
}

main()
  .catch((error: unknown) => {
    console.error('conformance:', error instanceof Error ? error.message : error);
    console.log('conformance: 0 passed, 1 failed');
    return 1;
  })
  .then(async (code) => {
    await stopAllChildren();
    process.exit(code);
  });
