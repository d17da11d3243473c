// Identity of HTTP hosts: the local token (kept in the state directory), API keys (kept as SHA-256
// hashes) and OAuth 2.1 access tokens (JWTs checked against the authorization server's JWKS), plus
// the RFC 9728 protected-resource metadata that tells a host where to get a token. A request that
// proves no identity gets a 401 and nothing else: no session, no catalog.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { JWTPayload } from 'jose';
import { authModeOf, httpAuthProblems, isLoopbackHost, type Config } from '../config/schema.js';
import type { Logger } from '../log.js';
import type { Caller } from '../call/context.js';
import { stateDirFile } from '../state/sqlite-file.js';
import { readTokenFile, tokenFile } from '../state/token-file.js';
import { refuse as refuseWith, statusOf } from './http-refusal.js';
import { isRunningFront } from './front-record.js';

export { authModeOf };

type AuthConfig = Config['http']['auth'];
type OAuthConfig = NonNullable<AuthConfig['oauth']>;

/** Where RFC 9728 puts protected-resource metadata; the MCP endpoint's path may follow it. */
export const METADATA_PATH = '/.well-known/oauth-protected-resource';

type Jose = typeof import('jose');
/** jose, loaded with the first token to verify: a front without OAuth never loads it. */
let jose: Promise<Jose> | undefined;

/** The caller of every request when the front tells no callers apart (mode local or none). */
export const ANONYMOUS: Caller = { kind: 'host', id: 'http' };

export interface Authenticator {
  /** Answers a request for the protected-resource metadata; false when `path` is not one of its paths. */
  metadata(req: IncomingMessage, res: ServerResponse, path: string): boolean;
  /** The request's caller, or undefined once it has been answered (401, 403 or 503). */
  authenticate(req: IncomingMessage, res: ServerResponse): Promise<Caller | undefined>;
}

/** A fresh API key: 32 random bytes, base64url, with a prefix that makes a leaked one recognisable. */
export function newApiKey(): string {
  return `sbk_${randomBytes(32).toString('base64url')}`;
}

export function sha256Hex(text: string): string {
  return sha256(text).toString('hex');
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** The local token's file, in the state directory (hidden from sandboxed backends with it). */
export const LOCAL_TOKEN_FILE = 'http-token';

export function localTokenPath(env: NodeJS.ProcessEnv = process.env): string {
  return stateDirFile(LOCAL_TOKEN_FILE, env);
}

/** The local token, made at first use; a state directory it cannot be kept in stops the start. */
function localToken(env: NodeJS.ProcessEnv): string {
  const path = localTokenPath(env);
  try {
    return tokenFile(path);
  } catch (err) {
    throw new Error(
      `http.auth: cannot keep the local token in ${path}: ${(err as Error).message}. Make the ` +
        'directory writable (or set XDG_STATE_HOME to one that is), or configure http.auth.keys',
      { cause: err },
    );
  }
}

/**
 * The local token for a client of this user's switchboard at `url`, if there is one: only for a
 * loopback URL (the token must not travel to another machine) at a port a running switchboard's
 * front holds (not to whatever else listens there: a backend's server), and never made here.
 */
export function localTokenFor(url: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (!URL.canParse(url) || !isLoopbackHost(new URL(url).hostname)) return undefined;
  if (!isRunningFront(url, env)) return undefined;
  return readTokenFile(localTokenPath(env));
}

interface Refusal {
  reason: 'http_unauthorized' | 'http_insufficient_scope' | 'http_auth_unavailable';
  /** Parameters of the Bearer challenge besides resource_metadata and scope. */
  error?: 'invalid_token' | 'insufficient_scope';
  description: string;
}

/** Throws when the http section cannot be served as it is (an open non-loopback address, say). */
export function checkHttpAuth(http: { host: string; auth: AuthConfig }): void {
  const problems = httpAuthProblems(http);
  if (problems.length > 0) {
    throw new Error(problems.map((p) => `http.${p.path.join('.')}: ${p.message}`).join('\n'));
  }
}

export function createAuthenticator(
  http: { host: string; path: string; auth: AuthConfig },
  log: Logger,
  env: NodeJS.ProcessEnv = process.env,
): Authenticator {
  checkHttpAuth(http);
  const { auth } = http;
  const mode = authModeOf(auth);
  if (mode === 'none') {
    const who = isLoopbackHost(http.host)
      ? 'any process on this machine (other users, sandboxed backends with network)'
      : 'anyone who can reach this address';
    log.warn({ host: http.host }, `http.auth.mode is none: ${who} can use every backend as the caller http`);
    return { metadata: () => false, authenticate: () => Promise.resolve(ANONYMOUS) };
  }
  // Keys or OAuth replace the local token: a host still sending it (the README's line) is refused.
  if (mode !== 'local' && readTokenFile(localTokenPath(env)) !== undefined)
    log.warn(
      { mode, tokenFile: localTokenPath(env) },
      `http.auth is ${mode}: the local token in ${localTokenPath(env)} is no longer accepted (hosts that send it are refused)`,
    );
  const keys: { caller: Caller; hash: Buffer }[] =
    mode === 'local'
      ? [{ caller: ANONYMOUS, hash: sha256(localToken(env)) }]
      : mode === 'oauth'
        ? []
        : auth.keys.map((k) => ({
            caller: { kind: 'host', id: `key:${k.name}` },
            hash: Buffer.from(k.sha256, 'hex'),
          }));
  const oauth = mode === 'apiKey' || mode === 'local' ? undefined : auth.oauth;
  /** Where the local token is, as a host is told: the file's name, not the user's home. */
  const whereLocal = `the token in the ${LOCAL_TOKEN_FILE} file of switchboard's state directory (switchboard up and doctor name it)`;
  /** What a request without a token is told it lacks. */
  const wanted =
    mode === 'local' ? `Authorization: Bearer <${whereLocal}> is required` : 'a Bearer token is required';
  // Made with the first token: it fetches the keys then, and keeps them.
  let jwks: ReturnType<Jose['createRemoteJWKSet']> | undefined;
  const audiences = oauth ? [oauth.audience].flat() : [];

  /** The resource this endpoint is, as metadata names it and tokens are meant for. */
  function resourceOf(req: IncomingMessage): URL {
    if (oauth?.resource) return new URL(oauth.resource);
    const first = audiences[0];
    if (first && /^https?:\/\//.test(first) && URL.canParse(first)) return new URL(first);
    const host = req.headers.host;
    if (host && /^([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(:\d{1,5})?$/.test(host))
      return new URL(`http://${host}${http.path}`);
    // No usable Host (possible only with dnsRebindingProtection off): the bound address.
    return new URL(`http://${http.host.includes(':') ? `[${http.host}]` : http.host}${http.path}`);
  }

  function metadataUrl(req: IncomingMessage): string {
    const resource = resourceOf(req);
    const suffix = resource.pathname === '/' ? '' : resource.pathname;
    return `${resource.origin}${METADATA_PATH}${suffix}`;
  }

  function challenge(req: IncomingMessage, refusal?: Refusal): string {
    const params: string[] = [];
    if (oauth) params.push(`resource_metadata="${metadataUrl(req)}"`);
    else params.push('realm="switchboard"');
    if (refusal?.error)
      params.push(`error="${refusal.error}"`, `error_description="${quoted(refusal.description)}"`);
    if (oauth && oauth.requiredScopes.length > 0) params.push(`scope="${oauth.requiredScopes.join(' ')}"`);
    return `Bearer ${params.join(', ')}`;
  }

  function refuse(req: IncomingMessage, res: ServerResponse, refusal: Refusal): undefined {
    // A challenge tells the host to get (another) token; keys that cannot be fetched are not its doing.
    const unavailable = refusal.reason === 'http_auth_unavailable';
    const headers: Record<string, string> = unavailable
      ? {}
      : { 'www-authenticate': challenge(req, refusal) };
    const word = WORDS[refusal.reason];
    refuseWith(res, refusal.reason, `${word}: ${refusal.description}`, null, headers);
    return undefined;
  }

  function keyCaller(token: string): Caller | undefined {
    const presented = sha256(token);
    let found: Caller | undefined;
    // Every key is compared, in constant time each, so timing says nothing about which came close.
    for (const k of keys) if (timingSafeEqual(presented, k.hash) && found === undefined) found = k.caller;
    return found;
  }

  async function tokenCaller(token: string, config: OAuthConfig): Promise<Caller | Refusal> {
    const { createRemoteJWKSet, errors, jwtVerify } = await (jose ??= import('jose'));
    jwks ??= createRemoteJWKSet(new URL(config.jwksUri));
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, jwks, {
        issuer: config.issuer,
        audience: audiences,
        algorithms: [...config.algorithms],
        clockTolerance: config.clockToleranceSec,
        requiredClaims: ['exp', 'sub'],
      }));
    } catch (err) {
      return tokenRefusal(err, errors);
    }
    const granted = new Set(scopesOf(payload));
    const missing = config.requiredScopes.filter((s) => !granted.has(s));
    if (missing.length > 0) {
      return {
        reason: 'http_insufficient_scope',
        error: 'insufficient_scope',
        description: `the token lacks scope ${missing.join(' ')}`,
      };
    }
    return { kind: 'host', id: `oauth:${payload.sub!}` };
  }

  function tokenRefusal(err: unknown, errors: Jose['errors']): Refusal {
    const invalid = (description: string): Refusal => ({
      reason: 'http_unauthorized',
      error: 'invalid_token',
      description,
    });
    if (err instanceof errors.JWTExpired) return invalid('the token has expired');
    if (err instanceof errors.JWTClaimValidationFailed) {
      if (err.claim === 'aud') return invalid('the token was not issued for this resource');
      if (err.claim === 'iss')
        return invalid('the token was not issued by the expected authorization server');
      if (err.claim === 'nbf') return invalid('the token is not valid yet');
      return invalid(`the token's ${err.claim} claim is missing or invalid`);
    }
    if (err instanceof errors.JOSEAlgNotAllowed)
      return invalid('the token is signed with an algorithm not accepted here');
    // jose reports a JWKS endpoint that does not answer 200 with JSON as a plain JOSEError.
    const unfetched =
      err instanceof errors.JWKSTimeout ||
      err instanceof errors.JWKSInvalid ||
      !(err instanceof errors.JOSEError) ||
      err.code === 'ERR_JOSE_GENERIC';
    if (unfetched) {
      // The keys could not be fetched: the host's token may be fine, so this is not a 401.
      log.error(
        { err: err instanceof Error ? err.message : String(err) },
        'cannot fetch the OAuth signing keys',
      );
      return {
        reason: 'http_auth_unavailable',
        description: 'the signing keys of the authorization server cannot be fetched now',
      };
    }
    return invalid('the token is malformed or its signature does not verify');
  }

  return {
    metadata(req, res, path) {
      if (!oauth || (path !== METADATA_PATH && !path.startsWith(`${METADATA_PATH}/`))) return false;
      const suffix = path.slice(METADATA_PATH.length);
      if (suffix !== '' && suffix !== http.path && suffix !== resourceOf(req).pathname) return false;
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(statusOf('http_method_not_allowed'), { allow: 'GET, HEAD' }).end();
        return true;
      }
      const document = {
        resource: resourceOf(req).href,
        authorization_servers: oauth.authorizationServers ?? [oauth.issuer],
        ...(oauth.requiredScopes.length > 0 ? { scopes_supported: oauth.requiredScopes } : {}),
        bearer_methods_supported: ['header'],
        resource_signing_alg_values_supported: oauth.algorithms,
      };
      // Public by design: browser-based hosts read it from other origins.
      res
        .writeHead(200, { 'content-type': 'application/json', 'access-control-allow-origin': '*' })
        .end(req.method === 'HEAD' ? undefined : JSON.stringify(document));
      return true;
    },

    async authenticate(req, res) {
      const header = req.headers.authorization;
      const token = header === undefined ? undefined : /^Bearer +([^\s]+) *$/i.exec(header)?.[1];
      if (token === undefined) {
        // No credentials at all: a plain challenge, no error code (RFC 6750 section 3.1).
        log.debug({ from: req.socket.remoteAddress }, 'http host refused: no Bearer token');
        return refuse(req, res, { reason: 'http_unauthorized', description: wanted });
      }
      const byKey = keyCaller(token);
      if (byKey) return byKey;
      if (oauth) {
        const outcome = await tokenCaller(token, oauth);
        if ('kind' in outcome) return outcome;
        log.info(
          { status: statusOf(outcome.reason), why: outcome.description, from: req.socket.remoteAddress },
          'http host refused',
        );
        return refuse(req, res, outcome);
      }
      const unknown = mode === 'local' ? `not the local token: send ${whereLocal}` : 'unknown API key';
      log.info(
        { from: req.socket.remoteAddress },
        `http host refused: ${mode === 'local' ? 'not the local token' : unknown}`,
      );
      return refuse(req, res, { reason: 'http_unauthorized', error: 'invalid_token', description: unknown });
    },
  };
}

/** The first word of a refusal's message, as the status is named. */
const WORDS: Record<Refusal['reason'], string> = {
  http_unauthorized: 'Unauthorized',
  http_insufficient_scope: 'Forbidden',
  http_auth_unavailable: 'Unavailable',
};

function scopesOf(payload: JWTPayload): string[] {
  const { scope, scp } = payload as { scope?: unknown; scp?: unknown };
  if (typeof scope === 'string') return scope.split(' ').filter(Boolean);
  if (Array.isArray(scp)) return scp.filter((s): s is string => typeof s === 'string');
  if (typeof scp === 'string') return scp.split(' ').filter(Boolean);
  return [];
}

/** A quoted-string parameter value must not break out of its quotes. */
function quoted(text: string): string {
  return text.replace(/["\\]/g, '');
}
