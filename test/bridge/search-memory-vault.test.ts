// End to end: the search → memory → vault example, one host call, every pipe and socket captured, no key material on any of them.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes, verify } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Client } from '@modelcontextprotocol/client';
import { loadConfig } from '../../src/config/load.js';
import { isStdioBackend, type ConfigInput } from '../../src/config/schema.js';
import type { Switchboard } from '../../src/switchboard.js';
import { captureLog } from '../support/log-capture.js';
import { openHttp } from '../support/mcp-clients.js';
import { httpUrl, launchSwitchboard } from '../support/start-switchboard.js';
import { privateKeyForms, readCaptures, secretForms, startTcpTap, TAP, type TcpTap } from './wiretap.js';

const EXAMPLE = fileURLToPath(
  new URL('../../../examples/search-memory-vault/switchboard.yaml', import.meta.url),
);

type Json = Record<string, unknown>;

function textOf(result: { content?: unknown }): string {
  const first = (result.content as { type: string; text?: string }[] | undefined)?.[0];
  assert.equal(first?.type, 'text', JSON.stringify(result));
  return first.text!;
}

let dir: string;
let captureDir: string;
let sb: Switchboard | undefined;
let tcp: TcpTap | undefined;
let host: Client | undefined;
const log = captureLog('trace');
const keys = generateKeyPairSync('ed25519');
const secret = randomBytes(24).toString('base64url');
let answer: { entity: string; result: string; signature: string; algorithm: string };
let graph: Json;
let verified: Json;
let tampered: Json;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sb-smv-'));
  captureDir = join(dir, 'captures');
  await mkdir(captureDir);
  // The example's own file, with the test's secrets in its ${VAR} references.
  const loaded = await loadConfig(EXAMPLE, {
    env: { ...process.env, SIGNING_SECRET: secret, MEMORY_DIR: dir },
  });
  const input = structuredClone(loaded.config) as Json & { servers: Record<string, Json> };
  for (const [name, server] of Object.entries(loaded.config.servers)) {
    assert.ok(isStdioBackend(server));
    // Every backend runs behind the tap: its stdio and its bridge socket are copied to files.
    input.servers[name] = {
      ...input.servers[name],
      command: process.execPath,
      args: [TAP, captureDir, name, '--', server.command, ...server.args],
      // The tap's captures and the memory file are kept in the test's directory.
      sandbox: { write: [dir] },
    };
  }
  const privateKey = keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  sb = await launchSwitchboard(
    {
      ...input,
      vault: { keys: { ...loaded.config.vault.keys, records: { type: 'ed25519', privateKey } } },
    } as ConfigInput,
    { log: log.logger },
  );
  assert.deepEqual(sb.failedBackends, []);
  const url = new URL(httpUrl(sb));
  tcp = await startTcpTap(Number(url.port));
  ({ client: host } = await openHttp(`http://127.0.0.1:${tcp.port}${url.pathname}`, { name: 'smv-host' }));

  // The one call the scenario is about; everything after it only reads what it left behind.
  const out = await host.callTool({
    name: 'search_search_and_store',
    arguments: { query: 'vault signature' },
  });
  answer = JSON.parse(textOf(out)) as typeof answer;
  graph = JSON.parse(
    textOf(await host.callTool({ name: 'memory_open_nodes', arguments: { names: [answer.entity] } })),
  ) as Json;
  verified = JSON.parse(
    textOf(
      await host.callTool({
        name: 'vault_verify_signature',
        arguments: { data: answer.result, signature: answer.signature },
      }),
    ),
  ) as Json;
  tampered = JSON.parse(
    textOf(
      await host.callTool({
        name: 'vault_verify_signature',
        arguments: { data: answer.result + ' ', signature: answer.signature },
      }),
    ),
  ) as Json;
  // Stopping ends every tap, so the capture files are complete before anything reads them.
  await host.close();
  host = undefined;
  await sb.stop();
  sb = undefined;
});

after(async () => {
  await host?.close().catch(() => {});
  await sb?.stop();
  await tcp?.close();
  await rm(dir, { recursive: true, force: true });
});

test('the search result is stored in memory as the entity search named', () => {
  const entities = graph.entities as { name: string; entityType: string; observations: string[] }[];
  assert.equal(entities.length, 1);
  assert.equal(entities[0]!.name, answer.entity);
  assert.deepEqual(entities[0]!.observations, [answer.result]);
  assert.match(answer.result, /"id":"vault"/);
});

test('the signature verifies through the vault server, and with the public key alone', () => {
  assert.equal(answer.algorithm, 'ed25519');
  assert.deepEqual(verified, { valid: true, key: 'records' });
  assert.deepEqual(tampered, { valid: false, key: 'records' });
  const ok = verify(
    null,
    Buffer.from(answer.result),
    keys.publicKey,
    Buffer.from(answer.signature, 'base64'),
  );
  assert.ok(ok, 'signed with the configured key');
});

test('no key material crosses any pipe or socket, though the signature does', () => {
  const files = readCaptures(captureDir);
  const http = tcp!.captured();
  const captures = new Map<string, Buffer>([
    ...files,
    ['host http (sent)', http.sent],
    ['host http (received)', http.received],
    ['switchboard log', Buffer.from(log.text())],
  ]);
  // Every channel the call used was captured and carried something.
  for (const name of [
    'search.stdin',
    'search.stdout',
    'search.bridge-out',
    'search.bridge-in',
    'memory.stdin',
    'memory.stdout',
    'vault.stdin',
    'vault.stdout',
    'vault.bridge-out',
    'vault.bridge-in',
    'host http (sent)',
    'host http (received)',
  ]) {
    assert.ok((captures.get(name)?.length ?? 0) > 0, `${name} captured nothing`);
  }
  // The signature travelled: vault.sign answered over search's bridge, and on to the host and to vault.
  const signature = Buffer.from(answer.signature);
  for (const name of [
    'search.bridge-in',
    'search.stdout',
    'host http (received)',
    'vault.stdin',
    'vault.bridge-out',
  ]) {
    assert.ok(captures.get(name)!.includes(signature), `signature missing from ${name}`);
  }
  const forms = [...privateKeyForms(keys.privateKey), ...secretForms(secret)];
  for (const [name, bytes] of captures) {
    for (const form of forms) {
      assert.ok(!bytes.includes(form), `key material (${form.length} bytes) found in ${name}`);
    }
  }
});
