// Which requirement set runs against which target: same-era runs, and the cross-era matrix with its exclusions.
import { TARGETS, type Era, type Target } from './targets.js';

/** The era a requirement set's scenarios speak on the wire: 2026-07-28 and later are stateless. */
export function eraOf(set: string): Era {
  return set >= '2026-07-28' ? 'modern' : 'legacy';
}

export interface PlannedRun {
  readonly set: string;
  readonly target: Target;
  /**
   * Why the run is switched off by default, or undefined when it always runs: a pending run fails
   * on something switchboard has yet to fix. `--pending` (or SWITCHBOARD_CONFORMANCE_PENDING=1)
   * turns them on; once a run passes, drop its reason so it runs by default.
   */
  readonly pending: string | undefined;
  /** Scenarios of the set this target's backend era cannot express, each with the reason; not run. */
  readonly excluded: ReadonlyMap<string, string>;
}

// The io.modelcontextprotocol/tasks extension (SEP-2663): optional, and the fixture implements it in
// neither era, so through a legacy backend there is nothing to translate either.
const TASKS_EXTENSION = 'the fixture implements the tasks extension in neither era';

/**
 * The 2026-07-28 suite through switchboard to a legacy (2025-11-25) fixture. What is excluded
 * depends on what a legacy backend cannot say: the names (keys) of its input requests, and the
 * capabilities of one call. Everything else is expressible given switchboard's translation
 * (other scenarios read keys from the round before, never assume them): its input requests arrive as
 * server-initiated sampling/elicitation/roots requests in the call (the SDK's legacy shim sends a
 * round's requests concurrently, so `multiple-input-requests` is one round there too); requestState
 * is switchboard's own, so `request-state`, `multi-round` and `tampered-state` test switchboard's
 * sealing; list_changed notifications on the session feed `subscriptions/listen`; `caching` checks
 * only that ttlMs/cacheScope are present, which switchboard supplies for a backend that gives none;
 * `server-stateless` checks the front (discover, _meta ladder, headers, 404s, -32021, logLevel gating).
 */
export const LEGACY_BACKEND_UNDER_MODERN_SUITE: ReadonlyMap<string, string> = new Map([
  [
    'input-required-result-basic-elicitation',
    'it requires the inputRequests key the tool chose (user_name) and answers under it; a legacy backend’s ' +
      'elicitation/create carries no key, so the key is one switchboard makes up',
  ],
  [
    'input-required-result-ignore-extra-params',
    'its first call already answers under the tool’s own key (user_name) with no requestState; a legacy ' +
      'backend’s questions have no keys, so there is no earlier round whose key an answer could match',
  ],
  [
    'input-required-result-capability-check',
    'a legacy backend learns client capabilities once, at initialize, for switchboard’s session; it cannot shape ' +
      'one call’s input requests by the capabilities that call declares in _meta',
  ],
  ...[
    'tasks-lifecycle',
    'tasks-capability-negotiation',
    'tasks-wire-fields',
    'tasks-request-state-removal',
    'tasks-mrtr-input',
    'tasks-request-headers',
    'tasks-dispatch-and-envelope',
    'tasks-status-notifications',
    'tasks-required-task-error',
    'tasks-mrtr-composition',
  ].map((scenario): [string, string] => [scenario, TASKS_EXTENSION]),
]);

/**
 * The 2025-11-25 suite through switchboard to a modern (2026-07-28) fixture. Nothing is excluded:
 * the sampling and elicitation tools return `input_required` (switchboard turns it into requests in
 * the host's session), `ping`, `logging/setLevel` and `resources/(un)subscribe` are answered or
 * translated by switchboard (the modern wire answers them 404), and tool logging arrives once
 * switchboard passes the session's level as the per-request logLevel. `server-sse-polling` stays
 * in: a modern backend's streams are not resumable (2026-07-28 dropped Last-Event-ID), but the
 * checks that need a mid-call close are SHOULDs (WARN), and the priming event is the front's own.
 */
export const MODERN_BACKEND_UNDER_LEGACY_SUITE: ReadonlyMap<string, string> = new Map();

const NONE: ReadonlyMap<string, string> = new Map();

/** Whether the run's host and backend eras differ: a dual-era backend is spoken to in the host's. */
export function isCrossEra(set: string, target: Target): boolean {
  return target.fixtureEra !== 'dual' && eraOf(set) !== target.fixtureEra;
}

function run(set: string, target: Target, pending?: string): PlannedRun {
  const crossEra = isCrossEra(set, target);
  const excluded = !crossEra
    ? NONE
    : target.fixtureEra === 'legacy'
      ? LEGACY_BACKEND_UNDER_MODERN_SUITE
      : MODERN_BACKEND_UNDER_LEGACY_SUITE;
  return { set, target, pending, excluded };
}

/**
 * Every run `npm run conformance` knows, in the order it runs them. Same-era first (each set
 * against a backend of its own era), then the cross-era matrix. A set's direct run proves the
 * fixture; `--direct` selects those.
 */
export const MATRIX: readonly PlannedRun[] = [
  run('2025-11-25', TARGETS['gateway-stdio']),
  run('2025-11-25', TARGETS['gateway-http']),
  run('2026-07-28', TARGETS['direct-modern']),
  // (a) the modern suite through switchboard to a modern backend.
  run('2026-07-28', TARGETS['gateway-stdio-modern']),
  run('2026-07-28', TARGETS['gateway-http-modern']),
  // (b) cross-era: a modern host, a legacy backend.
  run('2026-07-28', TARGETS['gateway-stdio']),
  run('2026-07-28', TARGETS['gateway-http']),
  // (c) cross-era: a legacy host, a modern backend.
  run('2025-11-25', TARGETS['gateway-stdio-modern']),
  run('2025-11-25', TARGETS['gateway-http-modern']),
  // (d) a dual-era backend whose tools ask the legacy way, default config: each host in its own era.
  run('2025-11-25', TARGETS['gateway-stdio-dual']),
  run('2025-11-25', TARGETS['gateway-http-dual']),
  run('2026-07-28', TARGETS['gateway-stdio-dual']),
  run('2026-07-28', TARGETS['gateway-http-dual']),
];

/** The direct runs `--direct` selects: each set against the fixture alone, in the set's own era. */
export function directRun(set: string): PlannedRun {
  return run(set, TARGETS[eraOf(set) === 'modern' ? 'direct-modern' : 'direct-legacy']);
}
