// The shared context store as backends use it over the real bridge: versions, compare-and-set,
// delete, paged listing, TTL expiry, watch, validation and size limits, and policy per scope.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { probe } from '../gateway/harness.js';
import { openHttp } from '../support/mcp-clients.js';
import { until } from '../support/poll.js';
import { Received, failure, start } from './helpers.js';

const CALLER = fileURLToPath(new URL('../fixtures/bridge-caller.js', import.meta.url));

test("get, put, compare-and-set conflicts and delete in a backend's own scope", async (t) => {
  const { as } = await start(t);
  const a = await as('a');
  const scope = 'server:a';
  assert.deepEqual(await a.call('context.get', { scope, key: 'k' }), {
    found: false,
    scope,
    key: 'k',
    version: 0,
  });
  const first = (await a.call('context.put', { scope, key: 'k', value: { n: 1 } })) as { version: number };
  assert.ok(first.version > 0);
  const got = (await a.call('context.get', { scope, key: 'k' })) as Record<string, unknown>;
  assert.equal(got.found, true);
  assert.deepEqual(got.value, { n: 1 });
  assert.equal(got.version, first.version);
  // CAS: the right version wins, a stale one is refused with the current version.
  const second = (await a.call('context.cas', {
    scope,
    key: 'k',
    value: { n: 2 },
    ifVersion: first.version,
  })) as {
    version: number;
  };
  assert.ok(second.version > first.version);
  const stale = await failure(
    a.call('context.cas', { scope, key: 'k', value: { n: 3 }, ifVersion: first.version }),
  );
  assert.equal(stale.code, -32602);
  assert.deepEqual(stale.data, {
    scope,
    key: 'k',
    expected: first.version,
    version: second.version,
    reason: 'context_conflict',
  });
  // ifVersion 0: create only.
  const exists = await failure(a.call('context.cas', { scope, key: 'k', value: 1, ifVersion: 0 }));
  assert.equal((exists.data as { reason: string }).reason, 'context_conflict');
  await a.call('context.cas', { scope, key: 'fresh', value: 1, ifVersion: 0 });
  // Delete with a stale version is refused; with the current one it goes.
  await failure(a.call('context.delete', { scope, key: 'k', ifVersion: first.version }));
  assert.deepEqual(await a.call('context.delete', { scope, key: 'k', ifVersion: second.version }), {
    deleted: true,
  });
  assert.deepEqual(await a.call('context.delete', { scope, key: 'k' }), { deleted: false });
  // Recreated, it gets a version it never had: a CAS holding the old one cannot succeed.
  const again = (await a.call('context.put', { scope, key: 'k', value: 0 })) as { version: number };
  assert.ok(again.version > second.version);
});

test('list pages by prefix, in key order, and hides expired keys', async (t) => {
  const { as } = await start(t);
  const a = await as('a');
  const scope = 'server:a';
  for (const k of ['job/3', 'job/1', 'job/2', 'other', 'job/4', 'job/5'])
    await a.call('context.put', { scope, key: k, value: k });
  await a.call('context.put', { scope, key: 'job/0', value: 'short-lived', ttlMs: 1 });
  // Invisible as soon as its millisecond has passed (the sweep runs only every minute).
  await until(async () => {
    const got = (await a.call('context.get', { scope, key: 'job/0' })) as { found: boolean };
    return got.found ? undefined : true;
  }, 'job/0 to expire');
  const keys: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = (await a.call('context.list', {
      scope,
      prefix: 'job/',
      limit: 2,
      ...(cursor && { cursor }),
    })) as {
      entries: { key: string; value: unknown }[];
      nextCursor?: string;
    };
    keys.push(...page.entries.map((e) => e.key));
    cursor = page.nextCursor;
    pages++;
  } while (cursor);
  // job/0 has expired: not listed, though not swept yet.
  assert.deepEqual(keys, ['job/1', 'job/2', 'job/3', 'job/4', 'job/5']);
  assert.equal(pages, 3);
  assert.deepEqual(await a.call('context.get', { scope, key: 'job/0' }), {
    found: false,
    scope,
    key: 'job/0',
    version: 0,
  });
});

test('a watch streams puts, deletes and expiries under its prefix until cancelled', async (t) => {
  const { as } = await start(t, { context: { sweepMs: 100 } });
  const a = await as('a');
  const writer = await as('a');
  const seen = new Received(a);
  const stop = new AbortController();
  const watching = a.call('context.watch', { scope: 'server:a', prefix: 'cfg/' }, { signal: stop.signal });
  watching.catch(() => {});
  await seen.count('notifications/context/watching', 1);
  const put = (await writer.call('context.put', { scope: 'server:a', key: 'cfg/x', value: 7 })) as {
    version: number;
  };
  await writer.call('context.put', { scope: 'server:a', key: 'elsewhere', value: 1 });
  await writer.call('context.delete', { scope: 'server:a', key: 'cfg/x' });
  await writer.call('context.put', { scope: 'server:a', key: 'cfg/ttl', value: 'soon gone', ttlMs: 50 });
  const changes = await seen.count('notifications/context/changed', 4);
  assert.deepEqual(
    changes.map((c) => [c.key, c.op]),
    [
      ['cfg/x', 'put'],
      ['cfg/x', 'delete'],
      ['cfg/ttl', 'put'],
      ['cfg/ttl', 'expire'],
    ],
  );
  assert.deepEqual(changes[0], {
    scope: 'server:a',
    key: 'cfg/x',
    op: 'put',
    version: put.version,
    value: 7,
  });
  stop.abort();
  await assert.rejects(watching);
  await writer.call('context.put', { scope: 'server:a', key: 'cfg/after', value: 1 });
  // The cancelled watch is gone: a later write reaches no one (checked once the write answered).
  assert.equal(seen.of('notifications/context/changed').length, 4);
});

test('a backend reaches its own scope by default, and others only through a grant', async (t) => {
  const { as } = await start(t, {
    policy: {
      rules: [
        {
          name: 'b-reads-global',
          callers: ['backend:b'],
          handlers: ['context.get', 'context.list', 'context.watch'],
          when: { scope: { equals: 'global' } },
          effect: 'allow',
        },
        {
          name: 'a-writes-global',
          callers: ['backend:a'],
          handlers: ['context.*'],
          when: { scope: { equals: 'global' } },
          effect: 'allow',
        },
      ],
    },
  });
  const a = await as('a');
  const b = await as('b');
  await a.call('context.put', { scope: 'global', key: 'motd', value: 'hello' });
  assert.equal(
    ((await b.call('context.get', { scope: 'global', key: 'motd' })) as { value: string }).value,
    'hello',
  );
  // Granted reads only: b's write to global is refused for its arguments (-32040: context.put is a
  // handler b may use, on its own scope).
  const write = await failure(b.call('context.put', { scope: 'global', key: 'motd', value: 'mine' }));
  assert.equal(write.code, -32040);
  // b writes its own scope without any rule.
  await b.call('context.put', { scope: 'server:b', key: 'k', value: 1 });
});

test('a scope schema and a validator reject writes before they commit; sizes are bounded', async (t) => {
  const { sb, as } = await start(t, {
    context: {
      maxValueBytes: 64,
      scopes: {
        'server:a': {
          schema: {
            type: 'object',
            required: ['status'],
            properties: { status: { enum: ['ok', 'failed'] } },
          },
          maxKeys: 2,
        },
        'server:b': { validator: 'test.validate' },
      },
    },
  });
  const proposals: unknown[] = [];
  sb.gateway.handlers.register('test.validate', (params) => {
    proposals.push(params);
    const value = (params as { value: unknown }).value;
    return typeof value === 'number' && value % 2 === 0
      ? { valid: true }
      : { valid: false, reason: 'odd numbers only' };
  });
  const a = await as('a');
  const b = await as('b');
  const bad = await failure(
    a.call('context.put', { scope: 'server:a', key: 'r', value: { status: 'maybe' } }),
  );
  assert.equal((bad.data as { reason: string }).reason, 'context_rejected');
  assert.match(bad.message, /schema: \/status/);
  await a.call('context.put', { scope: 'server:a', key: 'r', value: { status: 'ok' } });
  await a.call('context.put', { scope: 'server:a', key: 's', value: { status: 'ok' } });
  const full = await failure(a.call('context.put', { scope: 'server:a', key: 't', value: { status: 'ok' } }));
  assert.equal((full.data as { reason: string }).reason, 'context_scope_full');
  const big = await failure(
    a.call('context.put', { scope: 'server:a', key: 'r', value: { status: 'ok', pad: 'x'.repeat(100) } }),
  );
  assert.deepEqual(
    [(big.data as { reason: string }).reason, (big.data as { limit: number }).limit],
    ['context_too_large', 64],
  );
  // The validator judges through the pipeline, told who proposes what.
  const odd = await failure(b.call('context.put', { scope: 'server:b', key: 'n', value: 3 }));
  assert.equal((odd.data as { reason: string }).reason, 'context_rejected');
  assert.match(odd.message, /odd numbers only/);
  await b.call('context.put', { scope: 'server:b', key: 'n', value: 4 });
  assert.deepEqual(proposals, [
    { scope: 'server:b', key: 'n', value: 3, version: 0, caller: 'backend:b' },
    { scope: 'server:b', key: 'n', value: 4, version: 0, caller: 'backend:b' },
  ]);
  assert.deepEqual(
    ((await b.call('context.get', { scope: 'server:b', key: 'n' })) as { value: number }).value,
    4,
  );
});

test('in process, a workflow reaches any scope through gateway.dispatch', async (t) => {
  const { sb } = await start(t);
  const wf = { kind: 'workflow', id: 'nightly' } as const;
  await sb.gateway.dispatch(wf, 'context.put', { scope: 'run:1', key: 'step', value: 'build' });
  const got = (await sb.gateway.dispatch(wf, 'context.get', { scope: 'run:1', key: 'step' })) as {
    value: string;
  };
  assert.equal(got.value, 'build');
});

test('a real backend process uses its own scope through the bridge client', async (t) => {
  const { sb } = await start(t, {
    servers: {
      a: probe('a'),
      caller: { command: process.execPath, args: [CALLER], bridge: { allow: ['caller_relay'] } },
    },
  });
  const { client: host } = await openHttp(sb.http!.url, { name: 'context-host' });
  t.after(() => host.close());
  const relay = async (method: string, params: Record<string, unknown>) => {
    const r = await host.callTool({ name: 'caller_relay', arguments: { method, params, chain: false } });
    return JSON.parse((r.content as { text: string }[])[0]!.text) as {
      result?: Record<string, unknown>;
      error?: unknown;
    };
  };
  const put = await relay('context.put', { scope: 'server:caller', key: 'seen', value: [1, 2] });
  assert.equal(typeof put.result?.version, 'number');
  const got = await relay('context.get', { scope: 'server:caller', key: 'seen' });
  assert.deepEqual(got.result?.value, [1, 2]);
  const other = await relay('context.get', { scope: 'server:a', key: 'seen' });
  assert.ok(other.error, "another backend's scope is refused");
});
