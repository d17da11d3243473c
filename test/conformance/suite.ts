// Runs the official conformance suite (server mode) against one URL and reads back every check it recorded.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { startChild, stopChild } from './processes.js';
import { conformancePackageDir, type RequirementSet } from './requirements.js';

export type CheckStatus = 'SUCCESS' | 'FAILURE' | 'WARNING' | 'SKIPPED' | 'INFO';

export interface Check {
  id: string;
  name: string;
  status: CheckStatus;
  errorMessage?: string;
  description?: string;
}

export interface ScenarioResult {
  scenario: string;
  /** Why the suite does not score it (`pending`, `added-after-release`, …); undefined when it is required. */
  notScoredReason: string | undefined;
  checks: Check[];
}

export interface SuiteRun {
  scenarios: ScenarioResult[];
  /** Scenarios the set names that left no result behind (crashed, timed out, or unknown to this suite build). */
  missing: string[];
  exitCode: number;
  /** The suite's own console output, for `--verbose` and for diagnosing a run that recorded nothing. */
  output: string;
}

export interface SuiteOptions {
  node: string;
  url: string;
  set: RequirementSet;
  outputDir: string;
  timeoutMs: number;
  verbose: boolean;
  /** Run only these scenarios of the set (each at the set's wire version); undefined runs the whole set. */
  scenarios?: readonly string[];
}

/**
 * `conformance server --requirements <set>` runs exactly the set's scenarios (scored and
 * not_scored) at the set's own wire version. `-o` makes every scenario leave its checks in
 * `<dir>/server-<scenario>-<timestamp>/checks.json`, which is read here instead of parsing the
 * console summary: it carries each check's id, status and message.
 */
export async function runSuite(options: SuiteOptions): Promise<SuiteRun> {
  const expected = options.scenarios ?? [...options.set.scored, ...options.set.notScored.keys()];
  let exitCode = 0;
  let output = '';
  if (options.scenarios === undefined) {
    ({ exitCode, output } = await runCli(options, ['--requirements', options.set.name]));
  } else {
    // `--requirements` cannot be narrowed to some scenarios, so each runs alone with what
    // `--requirements` implies for it: the set's wire version, applicability not re-checked. A
    // single-scenario run exits non-zero on any failing check, scored or not; the checks
    // themselves are what is counted, so that exit code is only kept as output.
    const deadline = Date.now() + options.timeoutMs;
    for (const scenario of options.scenarios) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) break;
      const one = await runCli({ ...options, timeoutMs: remaining }, [
        '--scenario',
        scenario,
        '--spec-version',
        options.set.name,
        '--force',
      ]);
      output += one.output;
    }
  }

  const scenarios = readResults(options.outputDir, options.set);
  const seen = new Set(scenarios.map((result) => result.scenario));
  return { scenarios, missing: expected.filter((name) => !seen.has(name)), exitCode, output };
}

async function runCli(
  options: SuiteOptions,
  selection: string[],
): Promise<{ exitCode: number; output: string }> {
  const cli = join(conformancePackageDir(), 'dist', 'index.js');
  const args = [cli, 'server', '--url', options.url, ...selection, '-o', options.outputDir];
  let output = '';
  const suite = startChild('conformance suite', options.node, args, {
    echoStderr: options.verbose,
    onStdout: (chunk) => {
      output += chunk;
      if (options.verbose) process.stderr.write(chunk);
    },
  });
  const timer = setTimeout(() => {
    output += `\n(the runner stopped the suite after ${options.timeoutMs} ms)\n`;
    void stopChild(suite);
  }, options.timeoutMs);
  const exitCode = await suite.exited;
  clearTimeout(timer);
  if (!options.verbose) output += suite.stderrTail();
  return { exitCode, output };
}

const RESULT_DIR = /^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/;

function readResults(outputDir: string, set: RequirementSet): ScenarioResult[] {
  if (!existsSync(outputDir)) return [];
  const results: ScenarioResult[] = [];
  for (const entry of readdirSync(outputDir).sort()) {
    const scenario = RESULT_DIR.exec(entry)?.[1];
    const file = join(outputDir, entry, 'checks.json');
    if (scenario === undefined || !existsSync(file)) continue;
    const checks = JSON.parse(readFileSync(file, 'utf8')) as Check[];
    results.push({ scenario, notScoredReason: set.notScored.get(scenario), checks });
  }
  return results;
}
