// The `admin` section: the operators' HTTP listener (health, readiness, Prometheus metrics, the
// JSON admin API the CLI and a dashboard use), separate from the MCP front, with its own credentials.
import { z } from 'zod';
import { BACKEND_NAME } from './backend-schema.js';

export const AdminSection = z
  .object({
    enabled: z
      .boolean()
      .default(true)
      .describe(
        'Serve the admin listener when `switchboard up` runs (also with --stdio). It always requires an admin credential, on loopback too.',
      ),
    host: z
      .string()
      .min(1)
      .default('127.0.0.1')
      .describe('Bind address of the admin listener (loopback by default).'),
    port: z
      .number()
      .int()
      .min(0)
      .max(65535)
      .default(7451)
      .describe(
        'Port of the admin listener (0 picks a free one). A port in use is logged; the MCP front still serves.',
      ),
    keys: z
      .array(
        z
          .object({
            name: z
              .string()
              .regex(BACKEND_NAME, 'a name of letters, digits, _ . - (at most 64)')
              .describe('Names the operator: its calls are made as the caller admin:<name>.'),
            sha256: z
              .string()
              .regex(/^[0-9a-f]{64}$/, '64 lowercase hex digits')
              .describe(
                'SHA-256 of the admin key, hex (switchboard keys new prints one); never the key itself.',
              ),
          })
          .strict(),
      )
      .default([])
      .describe(
        'Admin keys accepted besides the token in the state directory (admin-token, 0600). Host API keys (http.auth.keys) never open the admin listener.',
      ),
    stateDir: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Directory of admin-token and admin.json (default: the state directory, $XDG_STATE_HOME/switchboard, else ~/.local/state/switchboard). Hidden from sandboxed backends.',
      ),
    readyMinBackends: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe(
        '/readyz answers 200 once this many servers are ready. Default: every configured (enabled) server.',
      ),
    recentCalls: z
      .number()
      .int()
      .min(1)
      .max(100_000)
      .default(500)
      .describe('How many ended calls the admin API keeps for /api/v1/calls (a ring: the oldest go).'),
    metrics: z
      .object({
        enabled: z
          .boolean()
          .default(true)
          .describe('Keep Prometheus metrics (served on /metrics of the admin listener).'),
        maxSeriesPerLabel: z
          .number()
          .int()
          .min(1)
          .default(200)
          .describe(
            'Distinct values a label (server, tool, caller kind, stage) may take; later values are counted under (other).',
          ),
        stageSampleEvery: z
          .number()
          .int()
          .min(1)
          .default(10)
          .describe(
            'Stage durations are timed in every Nth call (1: every call); call counts and latency cover every call. Timing a call costs a little on its way; tracing, when on, times every call.',
          ),
      })
      .strict()
      .prefault({}),
  })
  .strict()
  .prefault({})
  .describe('The admin listener: /healthz, /readyz, /metrics and the JSON admin API (docs/operations.md).');
