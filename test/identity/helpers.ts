// Identity test helpers: a real JWKS served on port 0 from keys made with jose, tokens signed by
// it (or by a stranger), and raw requests to the HTTP front with an Authorization header.
import { createServer } from 'node:http';
import type { LookupAddress } from 'node:dns';
import type { TestContext } from 'node:test';
import { Client } from '@modelcontextprotocol/client';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from 'jose';
import { StreamableHttpChannel } from '../../src/backends/streamable-http-channel.js';
import type { LookupFunction } from '../../src/net/outbound.js';
import { HttpBackend } from '../../src/config/schema.js';
import { silentLogger } from '../../src/log.js';
import { DEFAULT_MAX_MESSAGE_BYTES } from '../../src/public/bridge-client/constants.js';
import { initialize, rawPost, type RawResponse } from '../gateway/harness.js';
import { listenForTest } from '../support/listen.js';

export const ISSUER = 'https://auth.example.test/';
export const AUDIENCE = 'https://mcp.example.test/mcp';

export interface Jwks {
  url: string;
  /** Requests the JWKS endpoint has answered. */
  readonly fetches: number;
  /** A token signed with the published key (ES256), with sensible defaults for every claim. */
  sign(
    claims?: JWTPayload,
    options?: { expiresIn?: string | number; key?: CryptoKey; kid?: string },
  ): Promise<string>;
  /** Makes the endpoint answer 500 (the authorization server is down). */
  fail(on: boolean): void;
}

export async function serveJwks(t: TestContext): Promise<Jwks> {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  let fetches = 0;
  let failing = false;
  const server = createServer((req, res) => {
    fetches++;
    if (failing) return void res.writeHead(500).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
  });
  const port = await listenForTest(t, server);
  return {
    url: `http://127.0.0.1:${port}/jwks`,
    get fetches() {
      return fetches;
    },
    fail: (on) => void (failing = on),
    sign: (claims = {}, options = {}) =>
      new SignJWT({ iss: ISSUER, aud: AUDIENCE, sub: 'alice', scope: 'mcp', ...claims })
        .setProtectedHeader({ alg: 'ES256', kid: options.kid ?? 'k1', typ: 'at+jwt' })
        .setIssuedAt()
        .setExpirationTime(options.expiresIn ?? '5m')
        .sign(options.key ?? privateKey),
  };
}

/** http.auth.oauth for a JWKS from serveJwks. */
export function oauthConfig(jwks: Jwks, extra: object = {}) {
  return { issuer: ISSUER, audience: AUDIENCE, jwksUri: jwks.url, ...extra };
}

/** A raw initialize POST, with the given bearer token (or none). */
export function initWith(url: string, token?: string): Promise<RawResponse> {
  return rawPost(url, initialize(), token === undefined ? {} : { authorization: `Bearer ${token}` });
}

/** An unsigned JWT (`alg: none`) with the given claims. */
export function unsignedToken(claims: JWTPayload): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ alg: 'none', typ: 'JWT' })}.${part(claims)}.`;
}

/** Parameters of a `WWW-Authenticate: Bearer k="v", ...` challenge. */
export function challengeParams(header: string | null): Record<string, string> {
  if (!header?.startsWith('Bearer ')) throw new Error(`not a Bearer challenge: ${header}`);
  return Object.fromEntries([...header.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
}

/** A resolver that answers from a table, as /etc/hosts would; counts the questions. */
export function fakeResolver(table: Record<string, string[]>): LookupFunction & { asked: string[] } {
  const asked: string[] = [];
  const lookup = ((hostname, options, callback) => {
    asked.push(hostname);
    const addresses: LookupAddress[] = (table[hostname] ?? []).map((address) => ({
      address,
      family: address.includes(':') ? 6 : 4,
    }));
    if (addresses.length === 0)
      return callback(
        Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }),
        [],
      );
    if (options.all) return callback(null, addresses);
    callback(null, addresses[0]!.address, addresses[0]!.family);
  }) as LookupFunction & { asked: string[] };
  lookup.asked = asked;
  return lookup;
}

/** Connects an SDK client over a backend channel built from `entry`; resolves to its tool names. */
export async function toolsThrough(
  t: TestContext,
  entry: object,
  lookup?: LookupFunction,
): Promise<string[]> {
  const channel = new StreamableHttpChannel(HttpBackend.parse(entry), {
    name: 'remote',
    lookup,
    log: silentLogger,
    maxMessageBytes: DEFAULT_MAX_MESSAGE_BYTES,
  });
  const client = new Client({ name: 'probe', version: '1.0.0' });
  t.after(() => client.close());
  await client.connect(channel as never);
  return (await client.listTools()).tools.map((tool) => tool.name);
}
