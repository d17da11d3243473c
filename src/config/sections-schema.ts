// Schemas of the settings sections beside servers, http and policy: each one a top-level key of the file.
import { z } from 'zod';
import { alternationOf, linearPatternProblem, matchesEmpty } from '../encoding/linear-pattern.js';
import { BACKEND_NAME, NamespacingMode } from './backend-schema.js';
import { CatalogViewFields } from './catalog-schema.js';
import { timerMs } from './durations.js';
export { AuditSection } from './audit-schema.js';
export { ContextSection, EventsSection } from './context-schema.js';

export const NamespacingSection = z
  .object({
    mode: NamespacingMode.default('conditional'),
    separator: z
      .string()
      .regex(/^[A-Za-z0-9_.-]{1,4}$/)
      .default('_')
      .describe('Placed between prefix and name.'),
    collisions: z
      .enum(['error', 'priority'])
      .default('error')
      .describe('What to do when two backends expose the same name: refuse, or keep the higher priority.'),
  })
  .strict()
  .prefault({});

export const CatalogSection = z
  .object({
    pageSize: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        'Items per page of tools/list, prompts/list, resources/list and resources/templates/list, ordered by name (URI, template), with an opaque nextCursor for the rest. Unset: every list is served whole, so a host that does not page still gets everything.',
      ),
    refreshIntervalMs: timerMs(0)
      .default(1000)
      .describe(
        'How long a list read from a server that does not announce changes (no listChanged) is served before a listing reads it again; a longer ttlMs the server gives on a list result counts too. Concurrent listings share one read. 0: every listing reads it again.',
      ),
    pollIntervalMs: timerMs(0)
      .default(30_000)
      .describe(
        'How often the lists of servers that do not announce changes are read without a listing asking (those not read within refreshIntervalMs, nor kept fresh by their ttlMs), so hosts hear list_changed for a change no listing has found. 0: only listings read them.',
      ),
    listTimeoutMs: timerMs(100)
      .default(10_000)
      .describe(
        "How long one read of a server's list (every page of it) may take; past it the read fails, the list the catalog holds is kept and read again later. A host's listing waits at most 2 s for the reads it starts, then is served the catalog as it is (hosts hear list_changed when the read comes back different).",
      ),
    ...CatalogViewFields,
  })
  .strict()
  .prefault({})
  .describe('How the merged catalog is served to callers.');

/** A day in ms: the shortest time a finished workflow run is kept (a run-as-task lives up to a day). */
const DAY_MS = 24 * 60 * 60_000;

export const StateSection = z
  .object({
    path: z
      .string()
      .min(1)
      .optional()
      .describe(
        "SQLite file of switchboard's own state, such as which caller owns which task, kept across restarts (default: $XDG_STATE_HOME/switchboard/state.sqlite, else ~/.local/state/switchboard/state.sqlite). Hidden from sandboxed backends.",
      ),
    workflowRunsKeepMs: z
      .number()
      .int()
      .refine((ms) => ms === 0 || ms >= DAY_MS, {
        message: 'at least a day (86400000: a run-as-task lives up to a day), or 0 to keep every run',
      })
      .default(30 * DAY_MS)
      .describe(
        "How long a finished workflow run (its record and step outcomes) is kept after it ends, in this state file and, with mesh.state jetstream, in the mesh's runs bucket; then it is deleted (checked when switchboard is ready and hourly). 0 keeps every run.",
      ),
  })
  .strict()
  .prefault({})
  .describe("Switchboard's state database.");

export const LimitsSection = z
  .object({
    maxMessageBytes: z
      .number()
      .int()
      .min(1024)
      .default(4 * 1024 * 1024)
      .describe(
        'Largest JSON-RPC message accepted from a host or a backend, and the largest a bridge connection or the stdio front sends (an answer over it becomes an error naming both sizes).',
      ),
    maxUnreadBytes: z
      .number()
      .int()
      .min(65_536)
      .default(8 * 1024 * 1024)
      .describe(
        'Bytes written to one reader that it has not taken yet, past which switchboard stops buffering for it: an SSE stream is closed (the session stays), a bridge connection is closed, and the stdio host gets no more notifications until it catches up. A message is always written when nothing is waiting.',
      ),
    startupTimeoutMs: timerMs(100)
      .default(30_000)
      .describe(
        "How long a backend may take to open its connection and complete its handshake, and a modern one to acknowledge its subscriptions/listen stream (past that its lists are read as a silent backend's).",
      ),
    sessionRate: z
      .object({
        perSecond: z.number().positive().describe('Calls per second in the long run.'),
        burst: z.number().int().min(1).default(100).describe('Calls at once before the rate applies.'),
      })
      .strict()
      .optional()
      .describe(
        'Rate limit on the calls of one host session or bridge connection (default: none); calls over it are refused with -32050 (rate_limited, see docs/errors.md).',
      ),
    maxCallsPerSession: z
      .number()
      .int()
      .min(1)
      .default(256)
      .describe(
        "Calls one host session (or one backend over the bridge) may have under way at once; more wait in its queue (limits.maxQueuedPerSession), so one flooding caller cannot take everyone else's capacity.",
      ),
    maxQueuedPerSession: z
      .number()
      .int()
      .min(0)
      .default(16)
      .describe(
        'Calls of one host session (or one backend over the bridge) that may wait for a free slot once maxCallsPerSession are under way; more are refused with -32051 (queue_full; 0: refuse at once).',
      ),
  })
  .strict()
  .prefault({});

export const BridgeSection = z
  .object({
    enabled: z
      .boolean()
      .default(true)
      .describe('Listen on the bridge socket so backends can call each other.'),
    socket: z
      .string()
      .optional()
      .describe(
        'Path of the Unix socket (default: in a fresh directory of mode 0700 under the temp dir). Its directory must be your own and not shared like /tmp (it is made mode 0700); a socket another process listens on, or a file that is not a socket, is never replaced: switchboard does not start.',
      ),
    maxDepth: z
      .number()
      .int()
      .min(1)
      .max(64)
      .default(8)
      .describe('Longest chain of backends one call may pass through (A -> B -> C is 3).'),
    handlerTimeoutMs: timerMs(1)
      .default(30_000)
      .describe('How long a handler (vault.sign, ...) may take before its caller gets a timeout error.'),
  })
  .strict()
  .prefault({});

export const VaultSection = z
  .object({
    file: z
      .string()
      .min(1)
      .optional()
      .describe(
        'The encrypted vault file (default: $XDG_STATE_HOME/switchboard/vault.json, else ~/.local/state/switchboard/vault.json); read at start when keyFile or passphraseEnv is set.',
      ),
    keyFile: z
      .string()
      .min(1)
      .optional()
      .describe('File of 32 random bytes that unlocks the vault file (switchboard vault init --key-file).'),
    passphraseEnv: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name')
      .optional()
      .describe(
        'Name of the environment variable holding the passphrase that unlocks the vault file (scrypt).',
      ),
    keys: z
      .record(
        z.string().regex(BACKEND_NAME),
        z.discriminatedUnion('type', [
          z
            .object({
              type: z.literal('hmac-sha256'),
              secret: z
                .string()
                .min(16)
                .describe('The key material (use a ${VAR} reference, never a literal).'),
            })
            .strict(),
          z
            .object({
              type: z.literal('ed25519'),
              privateKey: z
                .string()
                .optional()
                .describe('PKCS#8 PEM; without it a fresh key is generated at each start.'),
            })
            .strict(),
        ]),
      )
      .default({})
      .describe(
        'Named keys used inside switchboard (vault.sign, vault.verify); they never leave its process.',
      ),
  })
  .strict()
  .prefault({});

export const ModernSection = z
  .object({
    inputTimeoutMs: timerMs(1)
      .default(300_000)
      .describe(
        'How long a call paused on input_required (a legacy backend asking a modern host) waits for the retry before it is cancelled; also how long a requestState stays valid.',
      ),
    stateKey: z
      .string()
      .min(32)
      .optional()
      .describe(
        "Secret that requestState values are sealed under (use a ${VAR} reference); switchboards sharing it accept each other's. Default: http.sessions.key (a key of its own is derived from it), else a random key per process.",
      ),
  })
  .prefault({})
  .describe('The modern (2026-07-28, stateless) era on the fronts.');

export const RedactionSection = z
  .object({
    patterns: z
      .array(
        z
          .string()
          .min(1)
          .superRefine((source, ctx) => {
            const problem = linearPatternProblem(source);
            if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
            else if (matchesEmpty(source))
              ctx.addIssue({ code: 'custom', message: 'a pattern that matches empty text hides nothing' });
          }),
      )
      .superRefine((sources, ctx) => {
        // All are tested together first (pattern-scan.ts): two groups of one name would collide.
        if (sources.length < 2 || sources.some((p) => linearPatternProblem(p) !== undefined)) return;
        const all = linearPatternProblem(alternationOf(sources));
        if (all !== undefined) ctx.addIssue({ code: 'custom', message: `the patterns together: ${all}` });
      })
      .default([])
      .describe(
        'Regular expressions (RE2 syntax, run in time linear in the text: no lookaround or backreferences) whose matches are replaced by [REDACTED:pattern-N] in results, errors, notifications, logs and audit records, besides vault secrets.',
      ),
  })
  .strict()
  .prefault({})
  .describe('What never leaves switchboard: vault secret values always, and these patterns.');

export const PinningSection = z
  .object({
    enabled: z
      .boolean()
      .default(false)
      .describe(
        'Pin the definition of each tool, prompt and resource template on first sight (in audit.path) and quarantine it when it changes.',
      ),
    onChange: z
      .enum(['hide', 'approve'])
      .default('hide')
      .describe(
        "What a changed definition (or one renamed to dodge its pin) becomes until an operator re-pins it: hidden from every caller, or listed with each use needing a human's approval (see policy.approval).",
      ),
    newTools: z
      .enum(['show', 'hide', 'approve'])
      .default('hide')
      .describe(
        "What a tool, prompt or template that appears after its backend's first list becomes: pinned and served (logged), hidden until an operator pins it, or listed with each use needing a human's approval until pinned.",
      ),
    scan: z
      .boolean()
      .default(true)
      .describe(
        'Scan tool definitions on arrival for hidden instructions, invisible or confusable characters, secret files, exfiltration URLs and look-alike names.',
      ),
    flagged: z
      .enum(['show', 'hide'])
      .default('show')
      .describe(
        'A tool the scanner flags on first sight: pinned with its flags shown (switchboard pins list), or quarantined until approved.',
      ),
  })
  .strict()
  .prefault({});

export const StartupSection = z
  .object({
    waitMs: timerMs(0)
      .default(0)
      .describe(
        "How long after start a host's handshake (initialize, server/discover), lists and calls wait for servers still starting before they are answered with the servers that are up. 0: answered at once; a server that comes up later is announced with list_changed, and a call to a name nobody up has waits for the servers still starting. The fronts listen at once either way.",
      ),
  })
  .strict()
  .prefault({});

export const ShutdownSection = z
  .object({
    drainMs: timerMs(0)
      .default(10_000)
      .describe(
        'On stop (SIGINT, SIGTERM, the stdio host closing stdin), how long host calls under way may take to finish (new ones are refused) before backends are ended; a call still running then is cut with a -32052 error (reason draining) and its backend is sent notifications/cancelled.',
      ),
  })
  .strict()
  .prefault({});

export const LogSection = z
  .object({
    level: z
      .enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'])
      .default('info')
      .describe('Least severe log level written (logs go to stderr).'),
  })
  .strict()
  .prefault({});

export { MeshSection } from './mesh-schema.js';
