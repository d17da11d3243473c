// `npm run conformance`: the official MCP conformance suite against the fixture, directly or through switchboard.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

import { ensureNode22 } from './node22.js';
import { stopAllChildren } from './processes.js';
import {
  COUNTED_NOT_SCORED_REASONS,
  DEFAULT_REQUIREMENT_SETS,
  loadRequirementSet,
  type RequirementSet,
} from './requirements.js';
import { runSuite, type SuiteRun } from './suite.js';
import { TARGETS, type Target } from './targets.js';

const USAGE = `usage: node dist/test/conformance/run.js [--direct] [--only stdio|http] [--requirements <set>]... [--verbose]

  (default)            switchboard fronting the fixture, once as a stdio backend, once as an HTTP backend
  --direct             the fixture alone over HTTP (proves the fixture, not the gateway)
  --only stdio|http    only one of the two gateway runs
  --requirements SET   requirement set to run (repeatable; default ${DEFAULT_REQUIREMENT_SETS.join(', ')})
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
        requirements: { type: 'string', multiple: true },
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

  const sets = (args.requirements ?? [...DEFAULT_REQUIREMENT_SETS]).map(loadRequirementSet);
  const targets: Target[] = args.direct
    ? [TARGETS.direct]
    : args.only === 'stdio'
      ? [TARGETS['gateway-stdio']]
      : args.only === 'http'
        ? [TARGETS['gateway-http']]
        : [TARGETS['gateway-stdio'], TARGETS['gateway-http']];

  const node = await ensureNode22();
  const workDir = mkdtempSync(join(tmpdir(), 'switchboard-conformance-'));
  const total: Tally = { passed: 0, failed: 0 };
  for (const set of sets) {
    for (const target of targets) {
      const tally = await runOne(target, set, node, workDir, args.verbose);
      total.passed += tally.passed;
      total.failed += tally.failed;
    }
  }

  if (total.failed > 0) console.log(`\nchecks and results kept in ${workDir}`);
  else rmSync(workDir, { recursive: true, force: true });
  // Read by CI: keep this exact form.
  console.log(`conformance: ${total.passed} passed, ${total.failed} failed`);
  return total.failed > 0 ? 1 : 0;
}

/** One suite run against one freshly started target; every process it started is stopped before it returns. */
async function runOne(target: Target, set: RequirementSet, node: string, workDir: string, verbose: boolean) {
  const label = `${target.name} @ ${set.name}`;
  console.log(`\n== ${label}: ${target.description}`);
  try {
    let url: string;
    try {
      url = await target.start(workDir, { verbose });
    } catch (error) {
      // Counted as one failure so the summary line can never read "0 failed" for a run that did not happen.
      console.log(`   could not start: ${(error as Error).message}`);
      return { passed: 0, failed: 1 };
    }
    console.log(`   suite → ${url}`);
    const outputDir = join(workDir, `${target.name}-${set.name}`);
    const run = await runSuite({ node, url, set, outputDir, timeoutMs: SUITE_TIMEOUT_MS, verbose });
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
