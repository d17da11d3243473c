// Schema of one entry under `servers:`: a stdio command switchboard spawns or a remote URL, with the
// settings every backend shares (bridge grants, era, restarts, timeouts, health, retries).
import { z } from 'zod';
import { BackendSandbox } from './sandbox-schema.js';
import { timerMs } from './durations.js';

/** Backend names become tool prefixes and URI-scheme prefixes, so they keep to a safe alphabet. */
export const BACKEND_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export const NamespacingMode = z
  .enum(['conditional', 'always', 'never'])
  .describe(
    'conditional: prefix names only when more than one backend is configured; always: always prefix; never: keep names as they are (they must then be unique)',
  );

const BackendCommon = {
  description: z.string().optional().describe('Free text for operators; not sent to hosts.'),
  disabled: z.boolean().default(false).describe('Keep the entry but do not start or connect to it.'),
  prefix: z
    .string()
    .regex(BACKEND_NAME, 'a name of letters, digits, _ . - (at most 64)')
    .optional()
    .describe('Namespace prefix for this backend (default: its name).'),
  namespacing: NamespacingMode.optional().describe('Overrides namespacing.mode for this backend.'),
  bridge: z
    .object({
      allow: z
        .array(z.string().min(1))
        .default([])
        .describe(
          'What this backend may reach through the bridge: patterns over exposed tool and prompt names, resource URIs and handler methods (* matches any run of characters). Default: nothing.',
        ),
      token: z
        .string()
        .min(24)
        .optional()
        .describe(
          'Bridge token for a backend switchboard does not spawn (a remote one); spawned backends get a fresh token each start.',
        ),
    })
    .strict()
    .prefault({})
    .describe('The backend as a caller over the bridge.'),
  era: z
    .enum(['auto', 'legacy', 'modern'])
    .default('auto')
    .describe(
      'Which MCP era the backend speaks: auto probes once with server/discover and falls back to initialize (the verdict is kept across restarts); legacy (2025-11-25 and earlier, initialize and a session) or modern (2026-07-28, stateless) skip the probe.',
    ),
  probeTimeoutMs: timerMs(1)
    .default(3_000)
    .describe('How long the era probe (server/discover) may take before the backend counts as legacy.'),
  share: z
    .enum(['auto', 'shared', 'per-session', 'single'])
    .default('auto')
    .describe(
      "Whether host sessions share one instance of the backend. shared: one instance (its replicas) for every session (a dual-era server's legacy hosts share a legacy instance of it); per-session: each legacy host session's calls that may ask the host something (tools/call, prompts/get, resources/read, completion/complete) go to an instance of its own, started on its first such call and stopped when the session ends, so a server-initiated request (sampling, elicitation, roots) always reaches the session it is about; auto: shared until the shared instance first asks a host something, then per-session for the sessions that come after; single: one instance for every host of either era, a dual-era server's legacy hosts translated for by its modern instance (one state for a server that keeps it in its process; tools that ask the host with requests of their own, the 2025 way, cannot ask a legacy host).",
    ),
  maxInstances: z
    .number()
    .int()
    .min(1)
    .max(256)
    .default(16)
    .describe(
      'Most per-session instances of this backend running at once; a session that would need one more is refused with backend_instances_exhausted.',
    ),
  priority: z
    .number()
    .int()
    .default(0)
    .describe('With namespacing.collisions = priority, the higher priority keeps a colliding name.'),
  restart: z
    .object({
      initialMs: timerMs(10)
        .default(500)
        .describe('Wait before the first restart (or retry of a failed start); doubles with each failure.'),
      maxMs: timerMs(10).default(30_000).describe('Longest wait between two restarts.'),
      stableMs: timerMs(0)
        .default(60_000)
        .describe('A backend up this long before it went down starts again from initialMs.'),
    })
    .strict()
    .prefault({})
    .describe('Restarting a backend that exited or failed to start: exponential backoff with jitter.'),
  timeouts: z
    .object({
      callMs: timerMs(1)
        .default(600_000)
        .describe('Absolute cap on one call to this backend, progress or not.'),
      idleMs: timerMs(1)
        .optional()
        .describe('A call fails when the backend sends no progress for this long (default: no idle limit).'),
      tools: z
        .record(
          z.string().min(1),
          z
            .object({
              callMs: timerMs(1).optional().describe('Replaces callMs for this tool.'),
              idleMs: timerMs(1).optional().describe('Replaces idleMs for this tool.'),
            })
            .strict(),
        )
        .default({})
        .describe("Per tool, by the backend's own tool name: limits that replace the backend's."),
    })
    .strict()
    .prefault({})
    .describe('How long calls to this backend may take.'),
  health: z
    .object({
      intervalMs: timerMs(0)
        .default(15_000)
        .describe('How often the backend is pinged while it is up (0: never).'),
      timeoutMs: timerMs(1).default(5_000).describe('How long one ping may take.'),
      misses: z
        .number()
        .int()
        .min(1)
        .default(3)
        .describe(
          'Pings missed, or requests failing to reach it, in a row after which the backend is treated as down and restarted.',
        ),
    })
    .strict()
    .prefault({})
    .describe('Liveness probes: a backend that stops answering is restarted (stdio) or reconnected (HTTP).'),
  retries: z
    .object({
      reads: z
        .number()
        .int()
        .min(0)
        .max(10)
        .default(1)
        .describe(
          'Times a read (resources/read, prompts/get) cut off by the backend going down is sent again once it is back; other calls are never re-sent.',
        ),
    })
    .strict()
    .prefault({})
    .describe('Re-sending idempotent reads that a backend failure cut off.'),
};

export const StdioBackend = z
  .object({
    type: z.literal('stdio').optional().describe('Optional: an entry with a command is always stdio.'),
    command: z.string().min(1).describe('Executable to spawn (no shell is involved).'),
    args: z.array(z.string()).default([]).describe('Arguments of the command, one argv entry each.'),
    cwd: z.string().optional().describe("Working directory of the child (default: switchboard's own)."),
    env: z
      .record(z.string(), z.string())
      .default({})
      .describe('Environment of the child. The parent environment is not inherited wholesale.'),
    secrets: z
      .record(
        z
          .string()
          .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name')
          .refine((n) => !n.startsWith('SWITCHBOARD_BRIDGE'), 'SWITCHBOARD_BRIDGE* is set by switchboard'),
        z.string().regex(BACKEND_NAME, 'a vault entry name'),
      )
      .default({})
      .describe(
        'Vault secrets put into the environment of the child, as ENV_NAME: secret-name; a backend gets no secret it does not list.',
      ),
    inheritEnv: z
      .array(z.string())
      .optional()
      .describe(
        'Names of parent environment variables passed through (default: PATH, HOME, USER, LANG, TERM, TMPDIR, SHELL, LOGNAME, and SystemRoot/APPDATA on Windows).',
      ),
    stderr: z
      .object({
        linesPerSecond: z
          .number()
          .min(0)
          .default(20)
          .describe(
            "Lines of the child's stderr, and of its stdout that are not JSON, logged per second in the long run.",
          ),
        burst: z.number().int().min(1).default(200).describe('Lines logged at once before the rate applies.'),
      })
      .strict()
      .prefault({})
      .describe(
        'Rate limit on logging what the child writes outside its messages (stderr, stdout lines that are not JSON); what is dropped is counted in the log.',
      ),
    replicas: z
      .number()
      .int()
      .min(1)
      .max(64)
      .default(1)
      .describe(
        'Children of this command run side by side as one server: calls go to the least busy, each child is health-checked and restarted on its own.',
      ),
    sandbox: BackendSandbox,
    ...BackendCommon,
  })
  .strict();

/** Headers an MCP HTTP client writes itself, per session or per message: a config may not set them. */
const CLIENT_HEADERS = new Set([
  'content-type',
  'content-length',
  'host',
  'last-event-id',
  'mcp-session-id',
  'mcp-protocol-version',
  'mcp-method',
  'mcp-name',
]);

export const HttpBackend = z
  .object({
    type: z
      .enum(['http', 'streamable-http', 'sse'])
      .optional()
      .describe('streamable-http (alias http, the default) or legacy HTTP+SSE.'),
    // Only http(s): z.url() alone would accept file:, data: or javascript: URLs.
    url: z
      .url({ protocol: /^https?$/ })
      .optional()
      .describe('Endpoint of the backend (http:// or https://); exactly one of url and urls.'),
    urls: z
      .array(z.url({ protocol: /^https?$/ }))
      .min(1)
      .optional()
      .describe(
        'Endpoints of replicas of one server, as an alternative to url: one connection (and session) each, calls go to the least busy.',
      ),
    headers: z
      .record(z.string(), z.string())
      .default({})
      .superRefine((headers, ctx) => {
        for (const name of Object.keys(headers))
          if (CLIENT_HEADERS.has(name.toLowerCase()))
            ctx.addIssue({
              code: 'custom',
              path: [name],
              message: `expected a header of the backend's own; ${name} is written by switchboard's client (it belongs to the session or the message): remove it`,
            });
      })
      .describe(
        'Extra HTTP headers sent on every request; ${secret:NAME} in a value is replaced by the vault secret NAME at connect time. Not those switchboard writes: Content-Type, Content-Length, Host, Last-Event-ID, Mcp-Session-Id, MCP-Protocol-Version, Mcp-Method, Mcp-Name.',
      ),
    allowPrivateNetwork: z
      .boolean()
      .default(false)
      .describe(
        'Let this backend connect to private, link-local or loopback addresses when its URL names a host that resolves to one (a URL with a literal IP or localhost is always allowed).',
      ),
    ...BackendCommon,
  })
  .strict()
  .check((ctx) => {
    const { url, urls } = ctx.value;
    if ((url === undefined) === (urls === undefined)) {
      ctx.issues.push({
        code: 'custom',
        input: ctx.value,
        path: [],
        message:
          url === undefined
            ? 'expected url (one endpoint) or urls (replicas), but both are missing'
            : 'expected either url (one endpoint) or urls (replicas), got both',
      });
    }
  });

export const A2ABackend = z
  .object({
    type: z.literal('a2a').optional().describe('Optional: an entry with a2a is always an A2A agent.'),
    a2a: z
      .url({ protocol: /^https?$/ })
      .describe(
        'Base URL of a remote A2A agent (http:// or https://): its card is read from <a2a>/.well-known/agent-card.json and its skills become tools.',
      ),
    cardPath: z
      .string()
      .startsWith('/')
      .default('/.well-known/agent-card.json')
      .describe('Where under the base URL the agent card is published.'),
    headers: z
      .record(z.string(), z.string())
      .default({})
      .describe(
        'Extra HTTP headers sent on every request to the agent (its credentials); ${secret:NAME} in a value is replaced by the vault secret NAME at connect time.',
      ),
    allowPrivateNetwork: z
      .boolean()
      .default(false)
      .describe(
        'Let this backend connect to private, link-local or loopback addresses when its URL names a host that resolves to one (a URL with a literal IP or localhost is always allowed).',
      ),
    ...BackendCommon,
    // The agent is put behind an MCP server of switchboard's own making, which speaks the legacy era.
    era: z
      .literal('legacy')
      .default('legacy')
      .describe('Always legacy: switchboard speaks MCP for the agent.'),
  })
  .strict();

export const Backend = z.union([StdioBackend, HttpBackend, A2ABackend]);

export type BackendConfig = z.output<typeof Backend>;
export type StdioBackendConfig = z.output<typeof StdioBackend>;
export type HttpBackendConfig = z.output<typeof HttpBackend>;
export type A2ABackendConfig = z.output<typeof A2ABackend>;
export type NamespacingMode = z.output<typeof NamespacingMode>;

export function isStdioBackend(b: BackendConfig): b is StdioBackendConfig {
  return 'command' in b;
}

export function isA2ABackend(b: BackendConfig): b is A2ABackendConfig {
  return 'a2a' in b;
}
