// `npm run bench [-- <scenario>… --calls N]`: each scenario next to a baseline measured in the same run.
import { measureInterleaved, type Measurement } from './lib/compare.js';
import { messageOf, type Endpoint } from './lib/endpoints.js';
import { gatewayMissing } from './lib/gateway.js';
import { RESULTS_DIR } from './lib/paths.js';
import { installExitHooks, killEverything, survivors } from './lib/processes.js';
import { formatTable, rowsForJson, writeResults, type Row, type Skip } from './lib/report.js';
import { PATH_TIME, pathTimeProblem } from './lib/path-time.js';
import { BRIDGE_SCENARIOS } from './bridge.js';
import { MESH_SCENARIOS } from './mesh.js';
import { CONTEXT_SCENARIOS } from './context.js';
import { WORKFLOW_SCENARIOS } from './workflow.js';
import { SESSION_SCENARIOS } from './session-open.js';
import { TRACING_SCENARIOS } from './tracing.js';
import { METRICS_SCENARIOS } from './metrics.js';
import { SCENARIOS as ECHO_SCENARIOS, type Scenario as AnyScenario, type Sizes } from './scenarios.js';
import { runScanBench } from './scan/run-scan.js';
import { runSoak } from './soak.js';
import { runCatalogModes } from './catalog/catalog-modes.js';
import { runScale } from './scale/run-scale.js';

// Each scenario names the client it drives (an SDK Client, or a bridge client); the runner only hands it back.
type Scenario = AnyScenario<unknown>;
const SCENARIOS: readonly Scenario[] = [
  ...ECHO_SCENARIOS,
  ...BRIDGE_SCENARIOS,
  ...SESSION_SCENARIOS,
  ...TRACING_SCENARIOS,
  ...METRICS_SCENARIOS,
  ...CONTEXT_SCENARIOS,
  ...WORKFLOW_SCENARIOS,
  ...MESH_SCENARIOS,
];

interface Pick {
  baseline: boolean;
  subject: boolean;
}

interface Args {
  readonly sizes: Sizes;
  readonly picks: Map<Scenario, Pick>;
}

// How much of a failing gateway's stderr goes into the report: enough for the first clue.
const STDERR_LINES = 8;

// A warm-up of a few thousand calls: V8 compiles a function called once per call with its optimising
// compiler only after thousands of calls, and a gateway that has served that many is what is measured
// (after 200 calls, switchboard spent two to three times the CPU per call it spends warm; see
// docs/benchmarks.md).
const DEFAULT_SIZES: Sizes = { calls: 2000, warmup: 3000, rounds: 4 };

const USAGE = `usage: npm run bench -- [scenario…] [--calls N] [--warmup N] [--rounds N]

scenarios (default: all; naming a switchboard side also runs its baseline):
${SCENARIOS.map((s) => `  ${s.name.padEnd(16)} ${s.baseline.name} + ${s.subject.name}: ${s.summary}`).join('\n')}

  --calls N   timed sequential calls per side, and as many again at 32 in flight (default ${DEFAULT_SIZES.calls});
              catalog listings are N/20
  --warmup N  untimed calls per side first, and as many in flight where throughput is measured (default ${DEFAULT_SIZES.warmup})
  --rounds N  slices the timed calls alternate in between the two sides (default ${DEFAULT_SIZES.rounds})

  scan        the definition scanner against its labelled corpus: detection and false-positive rates;
              not in the default set (scan --hide-held-out while tuning rules)
  scale       growth curves (backends, catalog with and without listChanged, sessions, payload,
              calls in flight), each point against its same-run baseline; not in the default set
              (scale --help)
  catalog-modes  tokens of tools/list in full vs search mode over real gathered tools, and search
              recall@1/@5 and MRR on the tuning and held-out task sets; not in the default set
  soak        mixed traffic with random backend kills for minutes; not in the default set (soak --help)

environment:
  SWITCHBOARD_BENCH_GATEWAY=<main.js>  measure another build's switchboard against the same baselines
  SWITCHBOARD_BENCH_CONFIG=<JSON>      config sections laid over every switchboard a scenario starts
                                       ('{"audit":{"enabled":false}}': what the audit costs a call)
  BENCH_CPU_PROF=<dir>                 each switchboard writes a V8 CPU profile there when it stops
  BENCH_GC=<dir>                       adds what switchboard allocates young and promotes per call,
                                       and its full collections (rows 'young alloc', 'promoted')
  BENCH_PATH=1                         adds how long the process in the middle held each message of
                                       the sequential calls, read off its system calls by perf (rows
                                       'request held', 'response held', the paired write, and the
                                       time busy after it; stdio scenarios, x86-64)

Targets are reported, never enforced: the exit code is 0 unless something failed to run.`;

function parseArgs(argv: readonly string[]): Args | string {
  const sizes = { ...DEFAULT_SIZES };
  const picks = new Map<Scenario, Pick>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--help' || arg === '-h') return USAGE;
    const flag = /^--(calls|warmup|rounds)(?:=(.*))?$/.exec(arg);
    if (flag !== null) {
      const value = Number(flag[2] ?? argv[++i]);
      const key = flag[1] as keyof Sizes;
      if (!Number.isInteger(value) || value < (key === 'warmup' ? 0 : 1))
        return `${arg}: expected a whole number`;
      sizes[key] = value;
      continue;
    }
    const scenario = SCENARIOS.find((s) => [s.name, s.baseline.name, s.subject.name].includes(arg));
    if (scenario === undefined) return `unknown scenario or option: ${arg}\n\n${USAGE}`;
    const pick = picks.get(scenario) ?? { baseline: true, subject: false };
    if (arg !== scenario.baseline.name) pick.subject = true;
    picks.set(scenario, pick);
  }
  if (picks.size === 0)
    for (const scenario of SCENARIOS) picks.set(scenario, { baseline: true, subject: true });
  return { sizes, picks };
}

interface Outcome {
  rows: Row[];
  skips: Skip[];
  measurements: Measurement[];
  failed: boolean;
}

async function runScenario(scenario: Scenario, pick: Pick, sizes: Sizes): Promise<Outcome> {
  const outcome: Outcome = { rows: [], skips: [], measurements: [], failed: false };
  const open: Endpoint<unknown>[] = [];
  try {
    progress(`${scenario.name}: starting ${scenario.baseline.name}`);
    const baseline = await scenario.baseline.open();
    open.push(baseline);
    await scenario.baseline.ready(baseline);

    let subject: Endpoint<unknown> | undefined;
    const missing = pick.subject ? gatewayMissing() : undefined;
    if (missing !== undefined) outcome.skips.push({ scenario: scenario.subject.name, reason: missing });
    else if (pick.subject) {
      progress(`${scenario.name}: starting ${scenario.subject.name}`);
      try {
        subject = await scenario.subject.open();
        open.push(subject);
        await scenario.subject.ready(subject);
      } catch (error) {
        // The baseline still gets measured: a broken gateway must not hide the reference figures.
        const tail = subject?.stderrTail().split('\n').slice(-STDERR_LINES).join('\n    ');
        const stderr = tail ? `\n    switchboard stderr (last lines):\n    ${tail}` : '';
        outcome.skips.push({
          scenario: scenario.subject.name,
          reason: `failed: ${messageOf(error)}${stderr}`,
        });
        outcome.failed = true;
        if (subject !== undefined) await open.pop()!.close();
        subject = undefined;
      }
    }

    const sides = [
      { side: scenario.baseline, endpoint: baseline },
      ...(subject === undefined ? [] : [{ side: scenario.subject, endpoint: subject }]),
    ];
    const plan = scenario.plan(sizes);
    progress(
      `${scenario.name}: measuring ${sides.map((s) => s.side.name).join(' vs ')} (${plan.calls} sequential` +
        (plan.throughputCalls > 0 ? ` + ${plan.throughputCalls} concurrent` : '') +
        ` calls each, ${plan.rounds} rounds)`,
    );
    const targets = sides.map(({ side, endpoint }) => ({
      name: side.name,
      call: scenario.call(endpoint.client),
      ...(scenario.settle && { settle: () => scenario.settle!(endpoint.client) }),
      pid: endpoint.pid,
    }));
    const [base, subj] = await measureInterleaved(targets, plan);
    outcome.measurements.push(...[base!, ...(subj === undefined ? [] : [subj])]);
    outcome.rows = scenario.rows(base!, subj);
  } catch (error) {
    outcome.skips.push({ scenario: scenario.name, reason: `failed: ${messageOf(error)}` });
    outcome.failed = true;
  } finally {
    for (const endpoint of open.reverse()) await endpoint.close();
  }
  return outcome;
}

function progress(message: string): void {
  console.error(`[bench] ${message}`);
}

async function main(): Promise<number> {
  // The soak runs for minutes against one switchboard, with no baseline: its own runner, opt-in.
  if (process.argv[2] === 'soak') return runSoak(process.argv.slice(3));
  if (process.argv[2] === 'catalog-modes') return runCatalogModes(process.argv.slice(3));
  // Growth curves: many points, each its own pair of processes, with their own table.
  if (process.argv[2] === 'scale') return runScale(process.argv.slice(3));
  // The scanner benchmark measures verdicts on a committed corpus, not time: no baseline, no processes.
  if (process.argv[2] === 'scan') return runScanBench(process.argv.slice(3));
  const args = parseArgs(process.argv.slice(2));
  if (typeof args === 'string') {
    const help = args === USAGE;
    (help ? console.log : console.error)(args);
    return help ? 0 : 2;
  }
  const pathProblem = PATH_TIME ? pathTimeProblem() : undefined;
  if (pathProblem !== undefined) {
    console.error(pathProblem);
    return 2;
  }
  installExitHooks();
  const all: Outcome = { rows: [], skips: [], measurements: [], failed: false };
  for (const [scenario, pick] of args.picks) {
    const outcome = await runScenario(scenario, pick, args.sizes);
    all.rows.push(...outcome.rows);
    all.skips.push(...outcome.skips);
    all.measurements.push(...outcome.measurements);
    all.failed ||= outcome.failed;
  }

  const left = survivors();
  if (left.length > 0) {
    all.skips.push({
      scenario: 'cleanup',
      reason: `processes outlived their scenario (now killed): ${left.join(', ')}`,
    });
    all.failed = true;
    killEverything();
  }

  const { calls, warmup, rounds } = args.sizes;
  console.log(
    `\nswitchboard benchmark — ${calls} calls, ${warmup} warm-up, ${rounds} rounds, node ${process.version}`,
  );
  console.log('ratio = switchboard ÷ baseline from the same run; targets are reported, never enforced\n');
  console.log(formatTable(all.rows, all.skips));
  const path = writeResults(RESULTS_DIR, {
    sizes: args.sizes,
    rows: rowsForJson(all.rows),
    skips: all.skips,
    measurements: all.measurements,
  });
  console.log(`\nresults: ${path}`);
  return all.failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error('bench failed:', error);
    process.exit(1);
  },
);
