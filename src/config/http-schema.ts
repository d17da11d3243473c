// Schema of the `http:` section: the Streamable HTTP front, its sealed sessions, its resumable
// streams and how its hosts authenticate.
import { z } from 'zod';
import { BACKEND_NAME } from './backend-schema.js';
import { timerMs } from './durations.js';

/** `http://host[:port]` or `https://…`, exactly as a browser sends it in Origin. */
const WebOrigin = z.string().superRefine((text, ctx) => {
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (url && (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === text) return;
  ctx.addIssue({
    code: 'custom',
    message: `expected a web origin as a browser sends it (http(s)://host[:port], lower case, no path, no trailing slash), got ${JSON.stringify(text)}`,
  });
});

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
      .enum(['local', 'none', 'apiKey', 'oauth', 'apiKey+oauth'])
      .optional()
      .describe(
        'Who may use the HTTP front. Default: what keys and oauth configure (both when both are set); when neither is, local, which is the default only on a loopback host. local: hosts send the token switchboard keeps in its state directory (`http-token`, made at first start, hidden from sandboxed backends), as `Authorization: Bearer <token>`; the caller is `http`. none: anyone who reaches the address, sandboxed backends with network included, is served as the caller `http`.',
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

export const HttpStreams = z
  .object({
    maxEvents: z
      .number()
      .int()
      .min(1)
      .default(1000)
      .describe(
        'Events kept per SSE stream for a host that resumes it with Last-Event-ID; the oldest go first, and a resume from before them is refused.',
      ),
    maxBytes: z
      .number()
      .int()
      .min(1024)
      .default(4 * 1024 * 1024)
      .describe(
        'Bytes of events kept per SSE stream for resumption (the newest event is always kept, whatever its size).',
      ),
    maxEndedBytes: z
      .number()
      .int()
      .min(1024)
      // One buffer of this size holds them.
      .max(1024 * 1024 * 1024)
      .default(16 * 1024 * 1024)
      .describe(
        "Bytes of events all ended SSE streams of the HTTP front keep together for resumption, in one buffer of this size filled in order; when a stream's events do not fit after the newest, the streams that ended first are forgotten before keepMs (the newest ended stream is always kept).",
      ),
    keepMs: timerMs(0)
      .default(30_000)
      .describe(
        'How long a stream stays resumable after it ended (its answer sent), and how long a GET stream whose connection dropped waits for its host to resume it.',
      ),
    retryMs: timerMs(0)
      .default(1000)
      .describe(
        'The SSE `retry` sent when a stream opens: how long a host waits before it comes back with Last-Event-ID.',
      ),
    pollAfterMs: timerMs(1)
      .optional()
      .describe(
        'Close the connection of a request still unanswered this long after the request, without ending its stream: the host comes back after `retryMs` and gets what followed on the resumed connection, which stays open until the answer (SSE polling). Default: never; useful behind proxies that cut long-held connections.',
      ),
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
    corsOrigins: z
      .array(WebOrigin)
      .default([])
      .describe(
        'Origins whose web pages may use the MCP endpoint from a browser (CORS): their preflight is answered and their answers readable, session id included. Accepted by the Origin check as well. A page still needs its token; no cookies are involved. Never `null` (any sandboxed page sends that).',
      ),
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
        max: z
          .number()
          .int()
          .min(1)
          .default(4096)
          .describe(
            'Sessions this instance holds at once, all callers together (those it opened and those it continued from a sealed id); an initialize over it is refused with HTTP 503 and -32053 (http_sessions_full).',
          ),
        maxPerCaller: z
          .number()
          .int()
          .min(1)
          .default(256)
          .describe(
            'Sessions one caller (one API key, one OAuth subject, or `http` without auth) holds at once on this instance; an initialize over it is refused with HTTP 429 and -32053 (http_too_many_sessions). A session counts until its host deletes it or its id expires (ttlMs).',
          ),
        detachedCallMs: timerMs(0)
          .default(60_000)
          .describe(
            "How long a legacy session's call goes on after the host's connection for it closed (on this wire a disconnection is not a cancellation); still unanswered then, it is cancelled and its backend is sent notifications/cancelled.",
          ),
      })
      .strict()
      .prefault({})
      .describe(
        'Legacy (2025-11-25) sessions: their state is sealed in the Mcp-Session-Id, so any instance with the same key continues them.',
      ),
    streams: HttpStreams.prefault({}).describe(
      'Legacy (2025-11-25) SSE streams: every event has an id, so a host whose connection drops resumes with GET and Last-Event-ID; what is kept for that, and for how long.',
    ),
    auth: HttpAuth.prefault({}).describe(
      'Identity of HTTP hosts: the local token (the default), API keys, OAuth access tokens, or none.',
    ),
  })
  .strict()
  .superRefine((http, ctx) => {
    for (const problem of httpAuthProblems(http)) ctx.addIssue({ code: 'custom', ...problem });
  });

/** The mode in force: the configured one, else what keys and oauth imply. */
export function authModeOf(auth: z.output<typeof HttpAuth>): NonNullable<z.output<typeof HttpAuth>['mode']> {
  if (auth.mode) return auth.mode;
  if (auth.oauth) return auth.keys.length ? 'apiKey+oauth' : 'oauth';
  return auth.keys.length ? 'apiKey' : 'local';
}

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
        'auth.keys or auth.oauth, set auth.mode: local to demand the token in the state directory, ' +
        'or auth.mode: none to serve anyone who can reach it',
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
