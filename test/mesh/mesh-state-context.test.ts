// The context store shared by two nodes through a real nats-server with JetStream (mesh.state
// jetstream): a write on one node is read on the other, compare-and-set across nodes, TTL,
// watches across nodes and size limits, driven by backends over each node's real bridge.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { after, before, describe, it, type TestContext } from 'node:test';
import type { ConfigInput } from '../../src/config/schema.js';
import type { BridgeClient } from '../../src/public/bridge-client/index.js';
import { Received, failure, start } from '../context/helpers.js';
import { NO_NATS, startNats, type Nats } from '../support/nats.js';
import { until } from '../support/poll.js';

const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

describe('the context store shared over JetStream', { skip: NO_NATS, timeout: 120_000 }, () => {
  let nats: Nats;
  before(async () => {
    nats = await startNats({ jetStream: mkdtempSync(join(tmpdir(), 'sb-js-')) });
  });
  after(async () => {
    await nats.stop();
  });

  /** Backend `a` of node `node` (each node has its own `a`, both writing scope server:a). */
  const nodeOf = async (t: TestContext, node: string, mesh: string): Promise<BridgeClient> => {
    const started = await start(t, {
      mesh: { enabled: true, servers: [nats.url], node, name: mesh, state: 'jetstream', heartbeatMs: 200 },
      context: { sweepMs: 100, scopes: { 'server:a': { maxKeys: 3 } } },
    } as Partial<ConfigInput>);
    return started.as('a');
  };

  it('switchboard context reads and writes the shared store when the config says mesh.state jetstream', async (t) => {
    const a = await nodeOf(t, 'a', 'm3');
    const dir = mkdtempSync(join(tmpdir(), 'sb-js-cli-'));
    const config = join(dir, 'switchboard.yaml');
    writeFileSync(
      config,
      stringify({
        mesh: { enabled: true, servers: [nats.url], node: 'cli', name: 'm3', state: 'jetstream' },
        context: { scopes: { 'server:a': { maxKeys: 3 } } },
      }),
    );
    const run = (...args: string[]) =>
      spawnSync(process.execPath, [CLI, 'context', ...args, '--config', config], { encoding: 'utf8' });
    await a.call('context.put', { scope: 'server:a', key: 'from-node', value: { n: 1 } });
    const got = run('get', 'server:a', 'from-node', '--json');
    assert.equal(got.status, 0, got.stderr);
    assert.deepEqual(JSON.parse(got.stdout).value, { n: 1 });
    const put = run('put', 'server:a', 'from-cli', '"hello"', '--if-version', '0');
    assert.equal(put.status, 0, put.stderr);
    const read = (await a.call('context.get', { scope: 'server:a', key: 'from-cli' })) as Record<
      string,
      unknown
    >;
    assert.equal(read.value, 'hello');
    // A compare-and-set on the shared version is refused as on a node.
    assert.equal(run('put', 'server:a', 'from-cli', '"again"', '--if-version', '0').status, 1);
    const listed = run('list', 'server:a');
    assert.deepEqual(
      listed.stdout
        .trim()
        .split('\n')
        .map((l) => l.split('\t')[0]),
      ['from-cli', 'from-node'],
    );
  });

  it('reads on one node what another wrote, and reports a compare-and-set across nodes as a conflict', async (t) => {
    const a = await nodeOf(t, 'a', 'm1');
    const b = await nodeOf(t, 'b', 'm1');
    const scope = 'server:a';
    const put = (await a.call('context.put', { scope, key: 'k', value: { n: 1 } })) as { version: number };
    const got = (await b.call('context.get', { scope, key: 'k' })) as Record<string, unknown>;
    assert.equal(got.found, true);
    assert.deepEqual(got.value, { n: 1 });
    assert.equal(got.version, put.version);
    // Both hold version put.version; a's compare-and-set wins, b's is a conflict naming a's version.
    const won = (await a.call('context.cas', {
      scope,
      key: 'k',
      value: { n: 2 },
      ifVersion: put.version,
    })) as {
      version: number;
    };
    const lost = await failure(
      b.call('context.cas', { scope, key: 'k', value: { n: 3 }, ifVersion: put.version }),
    );
    assert.deepEqual(lost.data, {
      scope,
      key: 'k',
      expected: put.version,
      version: won.version,
      reason: 'context_conflict',
    });
    // Create-only from both nodes: exactly one wins.
    const tries = await Promise.allSettled([
      a.call('context.cas', { scope, key: 'once', value: 'a', ifVersion: 0 }),
      b.call('context.cas', { scope, key: 'once', value: 'b', ifVersion: 0 }),
    ]);
    assert.equal(tries.filter((r) => r.status === 'fulfilled').length, 1);
    // A stale delete from b is refused; the current one goes, and a sees it gone.
    await failure(b.call('context.delete', { scope, key: 'k', ifVersion: put.version }));
    assert.deepEqual(await b.call('context.delete', { scope, key: 'k', ifVersion: won.version }), {
      deleted: true,
    });
    assert.equal(((await a.call('context.get', { scope, key: 'k' })) as { found: boolean }).found, false);
    // Listed on b (its copy of the bucket follows a's writes).
    await a.call('context.put', { scope, key: 'list/1', value: 1 });
    const listed = await until(async () => {
      const page = (await b.call('context.list', { scope, prefix: 'list/' })) as {
        entries: { key: string }[];
      };
      return page.entries.length === 1 ? page.entries : undefined;
    }, 'b lists what a wrote');
    assert.equal(listed[0]!.key, 'list/1');
    // The scope holds 3 keys (once, list/1, and this one); a fourth from b is refused before writing.
    await a.call('context.put', { scope, key: 'third', value: 3 });
    await until(async () => {
      const page = (await b.call('context.list', { scope })) as { entries: unknown[] };
      return page.entries.length === 3 ? true : undefined;
    }, 'b holds all three keys');
    const full = await failure(b.call('context.put', { scope, key: 'fourth', value: 4 }));
    assert.equal((full.data as { reason: string }).reason, 'context_scope_full');
    assert.equal(
      ((await a.call('context.get', { scope, key: 'fourth' })) as { found: boolean }).found,
      false,
    );
  });

  it('tells a watch on one node of puts, deletes and expiries made on another', async (t) => {
    const a = await nodeOf(t, 'a', 'm2');
    const b = await nodeOf(t, 'b', 'm2');
    const scope = 'server:a';
    const seen = new Received(b);
    const stop = new AbortController();
    const watching = b.call('context.watch', { scope, prefix: 'cfg/' }, { signal: stop.signal });
    watching.catch(() => {});
    await seen.count('notifications/context/watching', 1);
    const put = (await a.call('context.put', { scope, key: 'cfg/x', value: 7 })) as { version: number };
    await a.call('context.put', { scope, key: 'elsewhere', value: 1 });
    await a.call('context.delete', { scope, key: 'cfg/x' });
    await a.call('context.put', { scope, key: 'cfg/ttl', value: 'soon gone', ttlMs: 300 });
    const changes = await seen.count('notifications/context/changed', 4);
    assert.deepEqual(
      changes.map((c) => [c.key, c.op, c.version === put.version]),
      [
        ['cfg/x', 'put', true],
        ['cfg/x', 'delete', true],
        ['cfg/ttl', 'put', false],
        ['cfg/ttl', 'expire', false],
      ],
    );
    assert.equal(changes[0]!.value, 7);
    // Expired: gone for both nodes.
    for (const c of [a, b])
      assert.equal(
        ((await c.call('context.get', { scope, key: 'cfg/ttl' })) as { found: boolean }).found,
        false,
      );
    stop.abort();
    await assert.rejects(watching);
  });
});
