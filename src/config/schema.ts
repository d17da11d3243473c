// The one schema of switchboard's configuration. The YAML file, the mcpServers JSON that hosts
// use, CLI flags and the environment all compile into the `Config` this file defines.
import { z } from 'zod';
import { Policy } from '../policy/schema.js';

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
  probeTimeoutMs: z
    .number()
    .int()
    .min(1)
    .default(3_000)
    .describe('How long the era probe (server/discover) may take before the backend counts as legacy.'),
  priority: z
    .number()
    .int()
    .default(0)
    .describe('With namespacing.collisions = priority, the higher priority keeps a colliding name.'),
  restart: z
    .object({
      initialMs: z
        .number()
        .int()
        .min(10)
        .default(500)
        .describe('Wait before the first restart (or retry of a failed start); doubles with each failure.'),
      maxMs: z.number().int().min(10).default(30_000).describe('Longest wait between two restarts.'),
      stableMs: z
        .number()
        .int()
        .min(0)
        .default(60_000)
        .describe('A backend up this long before it went down starts again from initialMs.'),
    })
    .strict()
    .prefault({})
    .describe('Restarting a backend that exited or failed to start: exponential backoff with jitter.'),
  timeouts: z
    .object({
      callMs: z
        .number()
        .int()
        .min(1)
        .default(600_000)
        .describe('Absolute cap on one call to this backend, progress or not.'),
      idleMs: z
        .number()
        .int()
        .min(1)
        .optional()
        .describe('A call fails when the backend sends no progress for this long (default: no idle limit).'),
      tools: z
        .record(
          z.string().min(1),
          z
            .object({
              callMs: z.number().int().min(1).optional().describe('Replaces callMs for this tool.'),
              idleMs: z.number().int().min(1).optional().describe('Replaces idleMs for this tool.'),
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
      intervalMs: z
        .number()
        .int()
        .min(0)
        .default(15_000)
        .describe('How often the backend is pinged while it is up (0: never).'),
      timeoutMs: z.number().int().min(1).default(5_000).describe('How long one ping may take.'),
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
          .describe("Lines of the child's stderr logged per second in the long run."),
        burst: z.number().int().min(1).default(200).describe('Lines logged at once before the rate applies.'),
      })
      .strict()
      .prefault({})
      .describe("Rate limit on logging the child's stderr; what is dropped is counted in the log."),
    replicas: z
      .number()
      .int()
      .min(1)
      .max(64)
      .default(1)
      .describe(
        'Children of this command run side by side as one server: calls go to the least busy, each child is health-checked and restarted on its own.',
      ),
    ...BackendCommon,
  })
  .strict();

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
      .describe(
        'Extra HTTP headers sent on every request; ${secret:NAME} in a value is replaced by the vault secret NAME at connect time.',
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

export const Backend = z.union([StdioBackend, HttpBackend]);

/** Asymmetric JWS algorithms only: a JWKS publishes public keys, and `none` is never a signature. */
export const JWT_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
] as const;

export const HttpAuth = z
  .object({
    mode: z
      .enum(['none', 'apiKey', 'oauth', 'apiKey+oauth'])
      .optional()
      .describe(
        'Who may use the HTTP front. Default: what keys and oauth configure (both when both are set); none when neither is, which is allowed only on a loopback host.',
      ),
    keys: z
      .array(
        z
          .object({
            name: z
              .string()
              .regex(BACKEND_NAME, 'a name of letters, digits, _ . - (at most 64)')
              .describe('Names the host: it becomes the caller key:<name>.'),
            sha256: z
              .string()
              .regex(/^[0-9a-f]{64}$/, '64 lowercase hex digits')
              .describe(
                'SHA-256 of the key, hex (switchboard keys new prints it); the key itself is never stored.',
              ),
          })
          .strict(),
      )
      .default([])
      .describe('API keys accepted as `Authorization: Bearer <key>`, by the SHA-256 of each.'),
    oauth: z
      .object({
        issuer: z.string().min(1).describe('Expected `iss` of access tokens (the authorization server).'),
        audience: z
          .union([z.string().min(1), z.array(z.string().min(1)).min(1)])
          .describe('Expected `aud`: this resource, as the authorization server names it (RFC 8707).'),
        jwksUri: z
          .url({ protocol: /^https?$/ })
          .describe('Where the signing keys are published (JWKS); https, or http on a loopback host.'),
        requiredScopes: z
          .array(z.string().min(1))
          .default([])
          .describe('Scopes every token must carry; a token without them is refused with 403.'),
        algorithms: z
          .array(z.enum(JWT_ALGORITHMS))
          .min(1)
          .default(['RS256', 'ES256', 'EdDSA'])
          .describe('Signature algorithms accepted (asymmetric only).'),
        resource: z
          .url({ protocol: /^https?$/ })
          .optional()
          .describe(
            'This endpoint as the resource named in protected-resource metadata (default: the first audience if it is a URL, else derived from the request).',
          ),
        authorizationServers: z
          .array(z.url())
          .optional()
          .describe('authorization_servers in the metadata (default: the issuer).'),
        clockToleranceSec: z
          .number()
          .int()
          .min(0)
          .max(300)
          .default(30)
          .describe('Leeway for exp and nbf, for clocks that disagree a little.'),
      })
      .strict()
      .optional()
      .describe('Accept OAuth 2.1 access tokens (JWTs) as a resource server.'),
  })
  .strict();

export const HttpFront = z
  .object({
    host: z.string().default('127.0.0.1').describe('Address the HTTP front binds to.'),
    port: z.number().int().min(0).max(65535).default(7450).describe('TCP port (0 picks a free one).'),
    path: z.string().startsWith('/').default('/mcp').describe('URL path of the MCP endpoint.'),
    dnsRebindingProtection: z
      .boolean()
      .default(true)
      .describe('Check Host and Origin headers against the allowed lists.'),
    allowedHosts: z
      .array(z.string())
      .default([])
      .describe('Host header values accepted besides localhost, 127.0.0.1 and [::1] (with any port).'),
    allowedOrigins: z
      .array(z.string())
      .default([])
      .describe('Origin header values accepted besides http(s)://localhost, 127.0.0.1 and [::1].'),
    sessions: z
      .object({
        key: z
          .string()
          .min(32)
          .optional()
          .describe(
            'Secret that session ids are sealed with (AES-256-GCM, key derived once by HKDF-SHA256): at least 32 characters, e.g. `openssl rand -base64 32`, given as a ${VAR} reference. Every instance behind one load balancer gets the same. Default: a random key per process, so a session continues only on the instance that opened it.',
          ),
        ttlMs: z
          .number()
          .int()
          .min(1000)
          .default(86_400_000)
          .describe(
            'How long a session id is accepted after its initialize, on every instance; then the host gets 404 and opens a new session.',
          ),
      })
      .strict()
      .prefault({})
      .describe(
        'Legacy (2025-11-25) sessions: their state is sealed in the Mcp-Session-Id, so any instance with the same key continues them.',
      ),
    auth: HttpAuth.prefault({}).describe('Identity of HTTP hosts: API keys, OAuth access tokens, or none.'),
  })
  .strict()
  .superRefine((http, ctx) => {
    for (const problem of httpAuthProblems(http)) ctx.addIssue({ code: 'custom', ...problem });
  });

/** What makes an http section unusable for authentication; also checked at start for CLI overrides. */
export function httpAuthProblems(http: {
  host: string;
  auth: z.output<typeof HttpAuth>;
}): { path: (string | number)[]; message: string }[] {
  const { mode, keys, oauth } = http.auth;
  const problems: { path: (string | number)[]; message: string }[] = [];
  if ((mode === 'apiKey' || mode === 'apiKey+oauth') && keys.length === 0)
    problems.push({ path: ['auth', 'keys'], message: `mode ${mode} needs at least one key` });
  if ((mode === 'oauth' || mode === 'apiKey+oauth') && !oauth)
    problems.push({ path: ['auth', 'oauth'], message: `mode ${mode} needs an oauth section` });
  if (mode === undefined && keys.length === 0 && !oauth && !isLoopbackHost(http.host))
    problems.push({
      path: ['auth'],
      message:
        `host ${http.host} is not a loopback address, and nothing authenticates its hosts: configure ` +
        'auth.keys or auth.oauth, or set auth.mode: none to serve anyone who can reach it',
    });
  if (
    oauth &&
    !isLoopbackHost(new URL(oauth.jwksUri).hostname) &&
    new URL(oauth.jwksUri).protocol !== 'https:'
  )
    problems.push({
      path: ['auth', 'oauth', 'jwksUri'],
      message: 'expected an https:// URL (plain http only on a loopback host)',
    });
  const names = keys.map((k) => k.name);
  names.forEach((n, i) => {
    if (names.indexOf(n) !== i)
      problems.push({ path: ['auth', 'keys', i, 'name'], message: `duplicate key name ${n}` });
  });
  return problems;
}

export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

export const Config = z
  .object({
    servers: z
      .record(z.string().regex(BACKEND_NAME, 'a name of letters, digits, _ . - (at most 64)'), Backend)
      .default({})
      .describe('The MCP servers switchboard fronts, by name.'),
    namespacing: z
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
          .describe(
            'What to do when two backends expose the same name: refuse, or keep the higher priority.',
          ),
      })
      .strict()
      .prefault({}),
    http: HttpFront.prefault({}),
    limits: z
      .object({
        maxMessageBytes: z
          .number()
          .int()
          .min(1024)
          .default(4 * 1024 * 1024)
          .describe('Largest JSON-RPC message accepted from a host or a backend.'),
        startupTimeoutMs: z
          .number()
          .int()
          .min(100)
          .default(30_000)
          .describe('How long a backend may take to complete its handshake.'),
        sessionRate: z
          .object({
            perSecond: z.number().positive().describe('Calls per second in the long run.'),
            burst: z.number().int().min(1).default(100).describe('Calls at once before the rate applies.'),
          })
          .strict()
          .optional()
          .describe(
            'Rate limit on the calls of one host session or bridge connection (default: none); calls over it are refused with -32001.',
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
            'Calls of one host session (or one backend over the bridge) that may wait for a free slot once maxCallsPerSession are under way; more are refused with -32001 (0: refuse at once).',
          ),
      })
      .strict()
      .prefault({}),
    bridge: z
      .object({
        enabled: z
          .boolean()
          .default(true)
          .describe('Listen on the bridge socket so backends can call each other.'),
        socket: z
          .string()
          .optional()
          .describe(
            'Path of the Unix socket (default: in a fresh directory of mode 0700 under the temp dir).',
          ),
        maxDepth: z
          .number()
          .int()
          .min(1)
          .max(64)
          .default(8)
          .describe('Longest chain of backends one call may pass through (A -> B -> C is 3).'),
        handlerTimeoutMs: z
          .number()
          .int()
          .min(1)
          .default(30_000)
          .describe('How long a handler (vault.sign, ...) may take before its caller gets a timeout error.'),
      })
      .strict()
      .prefault({}),
    vault: z
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
          .describe(
            'File of 32 random bytes that unlocks the vault file (switchboard vault init --key-file).',
          ),
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
      .prefault({}),
    modern: z
      .object({
        inputTimeoutMs: z
          .number()
          .int()
          .min(1)
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
      .describe('The modern (2026-07-28, stateless) era on the fronts.'),
    redaction: z
      .object({
        patterns: z
          .array(
            z
              .string()
              .min(1)
              .refine(
                isRedactionPattern,
                'a JavaScript regular expression, without named groups, that cannot match empty text',
              ),
          )
          .default([])
          .describe(
            'Regular expressions whose matches are replaced by [REDACTED:pattern-N] in results, errors, notifications, logs and audit records, besides vault secrets.',
          ),
      })
      .strict()
      .prefault({})
      .describe('What never leaves switchboard: vault secret values always, and these patterns.'),
    audit: z
      .object({
        enabled: z
          .boolean()
          .default(true)
          .describe('Write one hash-chained record per call (host or bridge, allowed or refused).'),
        path: z
          .string()
          .min(1)
          .optional()
          .describe(
            'SQLite file of the audit chain and the tool pins (default: $XDG_STATE_HOME/switchboard/audit.sqlite, else ~/.local/state/switchboard/audit.sqlite).',
          ),
        values: z
          .boolean()
          .default(false)
          .describe('Also store the canonical arguments of each call, not only their SHA-256.'),
      })
      .strict()
      .prefault({}),
    policy: Policy,
    pinning: z
      .object({
        enabled: z
          .boolean()
          .default(false)
          .describe(
            "Pin each tool's definition on first sight (in audit.path) and quarantine it when it changes.",
          ),
        onChange: z
          .enum(['hide', 'approve'])
          .default('hide')
          .describe(
            "What a changed tool becomes until an operator re-pins it: hidden from every caller, or listed with each call needing a human's approval (see policy.approval).",
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
      .prefault({}),
    shutdown: z
      .object({
        drainMs: z
          .number()
          .int()
          .min(0)
          .default(10_000)
          .describe(
            'On stop, how long host calls under way may take to finish (new ones are refused) before backends are ended.',
          ),
      })
      .strict()
      .prefault({}),
    log: z
      .object({
        level: z
          .enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'])
          .default('info')
          .describe('Least severe log level written (logs go to stderr).'),
      })
      .strict()
      .prefault({}),
  })
  .strict();

export type Config = z.output<typeof Config>;
export type ConfigInput = z.input<typeof Config>;
export type BackendConfig = z.output<typeof Backend>;
export type StdioBackendConfig = z.output<typeof StdioBackend>;
export type HttpBackendConfig = z.output<typeof HttpBackend>;
export type NamespacingMode = z.output<typeof NamespacingMode>;
export type VaultKeyConfig = Config['vault']['keys'][string];

function isRedactionPattern(source: string): boolean {
  try {
    // Named groups would collide once the patterns are combined into one expression.
    return !new RegExp(`^(?:${source})$`).test('') && !/\(\?<(?![=!])/.test(source);
  } catch {
    return false;
  }
}

export function isStdioBackend(b: BackendConfig): b is StdioBackendConfig {
  return 'command' in b;
}
