// The seed scenario (search → store in the real server-memory → sign with vault.sign) done by a host
// as one workflow call and as the tool calls a model would make: what crosses the host connection
// (messages, bytes, model turns) for each, and no key material in any pipe, database or log.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, randomBytes, verify } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/load.js';
import { isStdioBackend, type ConfigInput } from '../../src/config/schema.js';
import type { Switchboard } from '../../src/switchboard.js';
import { captureLog } from '../support/log-capture.js';
import { httpUrl, launchSwitchboard } from '../support/start-switchboard.js';
import {
  privateKeyForms,
  readCaptures,
  secretForms,
  startTcpTap,
  TAP,
  type TcpTap,
} from '../bridge/wiretap.js';
import { countingHost, type CountingHost, type Tally } from './counting-host.js';

const EXAMPLE = fileURLToPath(
  new URL('../../../examples/search-memory-vault/switchboard.yaml', import.meta.url),
);
// Same words, same hits, same length: the two ways store records of the same size under two names.
const QUERY_WORKFLOW = 'vault signature';
const QUERY_CALLS = 'signature vault';

type Json = Record<string, unknown>;

/** One host tool call and the earlier calls whose results its arguments were built from. */
interface Step {
  tool: string;
  needs: string[];
}

/** Model turns needed: a call can be made only in a turn after every result it is built from. */
function turns(steps: Step[]): number {
  const at = new Map<string, number>();
  for (const s of steps) at.set(s.tool, 1 + Math.max(0, ...s.needs.map((n) => at.get(n)!)));
  return Math.max(...at.values());
}

interface Way {
  tally: Tally;
  wire: number;
  steps: Step[];
  signature: string;
  data: string;
}

function textOf(result: { content?: unknown }): string {
  const first = (result.content as { type: string; text?: string }[] | undefined)?.[0];
  assert.equal(first?.type, 'text', JSON.stringify(result));
  return first.text!;
}

let dir: string;
let captureDir: string;
let sb: Switchboard | undefined;
const taps: TcpTap[] = [];
const hosts: CountingHost[] = [];
const log = captureLog('trace');
const keys = generateKeyPairSync('ed25519');
const secret = randomBytes(24).toString('base64url');
let workflow: Way;
let calls: Way;
let stored: Json;

/** A host behind a TCP tap of its own, so its wire bytes are its alone. */
async function host(name: string): Promise<{ h: CountingHost; tap: TcpTap }> {
  const url = new URL(httpUrl(sb!));
  const tap = await startTcpTap(Number(url.port));
  taps.push(tap);
  const h = await countingHost(`http://127.0.0.1:${tap.port}${url.pathname}`, name);
  hosts.push(h);
  // A model reads the tool list either way; the job is what comes after it.
  await h.client.listTools();
  h.reset();
  return { h, tap };
}

const wireBytes = (tap: TcpTap) => {
  const c = tap.captured();
  return c.sent.length + c.received.length;
};

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sb-seed-'));
  captureDir = join(dir, 'captures');
  await mkdir(captureDir);
  const loaded = await loadConfig(EXAMPLE, {
    env: { ...process.env, SIGNING_SECRET: secret, MEMORY_DIR: dir },
  });
  const input = structuredClone(loaded.config) as Json & { servers: Record<string, Json> };
  for (const [name, server] of Object.entries(loaded.config.servers)) {
    assert.ok(isStdioBackend(server));
    input.servers[name] = {
      ...input.servers[name],
      // Every backend behind the tap: its stdin, stdout, stderr and bridge socket go to files.
      command: process.execPath,
      args: [TAP, captureDir, name, '--', server.command, ...server.args],
      sandbox: { write: [dir] },
    };
  }
  // The three-call way needs a signing tool for hosts: the opt-in the example leaves off.
  const vault = input.servers.vault as Json & { env: Json; bridge: { allow: string[] } };
  vault.env = { ...vault.env, VAULT_SIGN_FOR_HOSTS: '1' };
  vault.bridge = { ...vault.bridge, allow: [...vault.bridge.allow, 'vault.sign'] };
  const privateKey = keys.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  sb = await launchSwitchboard(
    {
      ...input,
      vault: { keys: { ...loaded.config.vault.keys, records: { type: 'ed25519', privateKey } } },
      state: { path: join(dir, 'state.sqlite') },
      audit: { enabled: true, path: join(dir, 'audit.sqlite') },
    } as ConfigInput,
    { log: log.logger },
  );
  assert.deepEqual(sb.failedBackends, []);

  // (a) One workflow call.
  {
    const { h, tap } = await host('seed-workflow');
    const before = wireBytes(tap);
    const r = await h.client.callTool({
      name: 'workflows_search_store_sign',
      arguments: { query: QUERY_WORKFLOW },
    });
    assert.equal(r.isError, undefined, JSON.stringify(r));
    const out = r.structuredContent as { result: string; signature: string; entity: string };
    assert.equal(out.entity, `search: ${QUERY_WORKFLOW}`);
    workflow = {
      tally: h.tally(),
      wire: wireBytes(tap) - before,
      steps: [{ tool: 'workflows_search_store_sign', needs: [] }],
      signature: out.signature,
      data: out.result,
    };
  }
  // (b) The same job as a model does it: each call built from the result of an earlier one.
  {
    const { h, tap } = await host('seed-calls');
    const before = wireBytes(tap);
    const found = textOf(
      await h.client.callTool({ name: 'search_search', arguments: { query: QUERY_CALLS } }),
    );
    const created = await h.client.callTool({
      name: 'memory_create_entities',
      arguments: {
        entities: [{ name: `search: ${QUERY_CALLS}`, entityType: 'search_result', observations: [found] }],
      },
    });
    assert.equal(created.isError, undefined, JSON.stringify(created));
    const signed = JSON.parse(
      textOf(await h.client.callTool({ name: 'vault_sign', arguments: { data: found } })),
    ) as { signature: string };
    calls = {
      tally: h.tally(),
      wire: wireBytes(tap) - before,
      steps: [
        { tool: 'search_search', needs: [] },
        { tool: 'memory_create_entities', needs: ['search_search'] },
        { tool: 'vault_sign', needs: ['search_search'] },
      ],
      signature: signed.signature,
      data: found,
    };
    stored = JSON.parse(
      textOf(
        await h.client.callTool({
          name: 'memory_open_nodes',
          arguments: { names: [`search: ${QUERY_WORKFLOW}`, `search: ${QUERY_CALLS}`] },
        }),
      ),
    ) as Json;
  }
  // Stopping ends every tap and closes the databases, so every capture is complete.
  for (const h of hosts.splice(0)) await h.client.close();
  await sb.stop();
  sb = undefined;
});

after(async () => {
  for (const h of hosts) await h.client.close().catch(() => {});
  await sb?.stop();
  for (const tap of taps) await tap.close();
  await rm(dir, { recursive: true, force: true });
});

test('both ways store the same record in server-memory and sign it with the configured key', () => {
  const entities = stored.entities as { name: string; observations: string[] }[];
  assert.deepEqual(
    entities.map((e) => e.name).sort(),
    [`search: ${QUERY_CALLS}`, `search: ${QUERY_WORKFLOW}`].sort(),
  );
  for (const way of [workflow, calls]) {
    const entity = entities.find((e) => e.observations[0] === way.data);
    assert.ok(entity, `stored: ${way.data}`);
    assert.match(way.data, /"id":"vault"/);
    assert.ok(verify(null, Buffer.from(way.data), keys.publicKey, Buffer.from(way.signature, 'base64')));
  }
});

test('the workflow takes one model turn and fewer messages and bytes than the three host calls', (t) => {
  const rows = [
    ['', 'workflow', '3 host calls'],
    ['host tool calls', String(workflow.steps.length), String(calls.steps.length)],
    ['model turns needed', String(turns(workflow.steps)), String(turns(calls.steps))],
    ['JSON-RPC messages (sent + received)', fmt(workflow.tally, 'msg'), fmt(calls.tally, 'msg')],
    ['JSON-RPC bytes (sent + received)', fmt(workflow.tally, 'bytes'), fmt(calls.tally, 'bytes')],
    ['bytes on the wire (HTTP, both ways)', String(workflow.wire), String(calls.wire)],
  ];
  for (const r of rows) t.diagnostic(`${r[0]!.padEnd(38)}${r[1]!.padStart(20)}${r[2]!.padStart(20)}`);
  assert.equal(turns(workflow.steps), 1);
  // create_entities and sign both wait for search's result: two turns at best, three one call a turn.
  assert.equal(turns(calls.steps), 2);
  const total = (x: Tally) => x.sentBytes + x.receivedBytes;
  assert.ok(total(workflow.tally) < total(calls.tally), `${total(workflow.tally)} < ${total(calls.tally)}`);
  assert.ok(
    workflow.tally.sent + workflow.tally.received < calls.tally.sent + calls.tally.received,
    'fewer messages',
  );
  assert.ok(workflow.wire < calls.wire, `${workflow.wire} < ${calls.wire} wire bytes`);
});

function fmt(x: Tally, what: 'msg' | 'bytes'): string {
  return what === 'msg'
    ? `${x.sent + x.received} (${x.sent} + ${x.received})`
    : `${x.sentBytes + x.receivedBytes} (${x.sentBytes} + ${x.receivedBytes})`;
}

test('no key material in any pipe, socket, database or log, though the signatures travel', async () => {
  const captures = readCaptures(captureDir);
  taps.forEach((tap, i) => {
    const c = tap.captured();
    captures.set(`host ${i} http (sent)`, c.sent);
    captures.set(`host ${i} http (received)`, c.received);
  });
  captures.set('switchboard log', Buffer.from(log.text()));
  // Every database file, with its journal files if any are left.
  for (const name of await readdir(dir)) {
    if (/^(state|audit)\.sqlite/.test(name)) captures.set(name, await readFile(join(dir, name)));
  }
  for (const name of [
    'search.stdin',
    'search.stdout',
    'memory.stdin',
    'memory.stdout',
    'vault.stdin',
    'vault.stdout',
    'vault.bridge-out',
    'vault.bridge-in',
    'state.sqlite',
    'audit.sqlite',
    'switchboard log',
  ]) {
    assert.ok((captures.get(name)?.length ?? 0) > 0, `${name} captured nothing`);
  }
  // The captures are the right ones: the signatures went where they should.
  assert.ok(captures.get('host 0 http (received)')!.includes(Buffer.from(workflow.signature)));
  assert.ok(captures.get('vault.bridge-in')!.includes(Buffer.from(calls.signature)));
  assert.ok(captures.get('state.sqlite')!.includes(Buffer.from('search_store_sign')));
  const forms = [...privateKeyForms(keys.privateKey), ...secretForms(secret)];
  for (const [name, bytes] of captures) {
    for (const form of forms) {
      assert.ok(!bytes.includes(form), `key material (${form.length} bytes) found in ${name}`);
    }
  }
});

test('as configured, the example gives hosts no way to sign: only the workflow signs for them', async (t) => {
  const loaded = await loadConfig(EXAMPLE, {
    env: { ...process.env, SIGNING_SECRET: secret, MEMORY_DIR: dir },
  });
  const plain = await launchSwitchboard(
    { ...loaded.config, state: { path: join(dir, 'plain-state.sqlite') } } as ConfigInput,
    { log: captureLog('warn').logger },
  );
  t.after(() => plain.stop());
  const h = await countingHost(httpUrl(plain), 'plain-host');
  t.after(() => h.client.close());
  const names = (await h.client.listTools()).tools.map((x) => x.name);
  assert.ok(names.includes('workflows_search_store_sign'), names.join());
  // No host tool signs data of the host's choosing (search_and_store signs only its own search).
  assert.deepEqual(
    names.filter((n) => /(^|_)sign(_|$)/.test(n)),
    ['workflows_search_store_sign'],
  );
  assert.ok(!names.includes('vault_sign'));
  // Nor by the handler itself, whichever door a host uses.
  await assert.rejects(
    plain.gateway.dispatch({ kind: 'host', id: 'http' }, 'vault.sign', { key: 'records', data: 'x' }),
    /Method not found|Unknown/,
  );
});
