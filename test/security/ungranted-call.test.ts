// Attack: a backend calling, over the bridge, what it was not granted. Whatever name, URI, kind
// or handler it tries, what the policy does not grant it answers exactly as what does not exist,
// is absent from its lists, and an explicit deny rule beats its bridge.allow.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { probe } from '../gateway/harness.js';
import { startGateway } from '../support/start-switchboard.js';
import { RawBridge, newToken, remoteCaller } from './helpers.js';

const TOKEN = newToken();

async function setup(t: Parameters<typeof startGateway>[0], extra: object = {}) {
  const sb = await startGateway(t, {
    servers: {
      a: probe('a'),
      b: probe('b'),
      r: remoteCaller(TOKEN, ['a_echo', 'a+probe://a/counter']),
    },
    vault: { keys: { k: { type: 'hmac-sha256', secret: 'a-secret-that-is-long-enough' } } },
    ...extra,
  });
  const raw = await RawBridge.as(sb.bridgePath!, TOKEN);
  t.after(() => raw.close());
  return raw;
}

/** Asserts the two answers are the same error once the names are swapped. */
function sameError(
  denied: Record<string, unknown>,
  unknown: Record<string, unknown>,
  name: string,
  other: string,
) {
  assert.ok(denied.error, `the ungranted ${name} was answered: ${JSON.stringify(denied)}`);
  assert.equal(JSON.stringify(denied.error).replaceAll(name, other), JSON.stringify(unknown.error));
}

test('a backend lists only what it was granted, and every ungranted target answers as an unknown one', async (t) => {
  const raw = await setup(t);
  const tools = (await raw.request('tools/list')).result as { tools: { name: string }[] };
  assert.deepEqual(
    tools.tools.map((x) => x.name),
    ['a_echo'],
  );
  const resources = (await raw.request('resources/list')).result as { resources: { uri: string }[] };
  assert.deepEqual(
    resources.resources.map((x) => x.uri),
    ['a+probe://a/counter'],
  );
  assert.deepEqual((await raw.request('prompts/list')).result, { prompts: [] });
  assert.ok((await raw.request('tools/call', { name: 'a_echo', arguments: {} })).result);

  for (const [name, other] of [
    ['a_touch', 'a_nothing'],
    ['b_echo', 'b_nothing'],
    // The backend's own name, without the prefix, is no way around the grant.
    ['echo', 'nothing'],
    ['A_ECHO', 'a_nothing'],
  ] as const) {
    sameError(
      await raw.request('tools/call', { name, arguments: {} }),
      await raw.request('tools/call', { name: other, arguments: {} }),
      name,
      other,
    );
  }
  sameError(
    await raw.request('resources/read', { uri: 'b+probe://b/counter' }),
    await raw.request('resources/read', { uri: 'b+probe://b/nothing' }),
    'b+probe://b/counter',
    'b+probe://b/nothing',
  );
  sameError(
    await raw.request('prompts/get', { name: 'a_greet', arguments: { who: 'x' } }),
    await raw.request('prompts/get', { name: 'a_nothing', arguments: { who: 'x' } }),
    'a_greet',
    'a_nothing',
  );
  // A handler inside switchboard (the vault) is as absent as one nobody registered.
  sameError(
    await raw.request('vault.sign', { key: 'k', data: 'x' }),
    await raw.request('vault.nothing', { key: 'k', data: 'x' }),
    'vault.sign',
    'vault.nothing',
  );
});

test('a deny rule beats bridge.allow, and a rule can grant a backend more than its bridge.allow', async (t) => {
  const raw = await setup(t, {
    policy: {
      rules: [
        {
          name: 'no-secrets',
          callers: ['backend:r'],
          backends: ['a'],
          tools: ['echo'],
          when: { path: { pathPrefix: '/secret' } },
          effect: 'deny',
        },
        { name: 'r-may-touch-b', callers: ['backend:r'], backends: ['b'], tools: ['touch'], effect: 'allow' },
        {
          name: 'nobody-reads-counters',
          callers: ['backend:*'],
          resources: ['probe://*/counter'],
          effect: 'deny',
        },
      ],
    },
  });
  const tools = (await raw.request('tools/list')).result as { tools: { name: string }[] };
  assert.deepEqual(tools.tools.map((x) => x.name).sort(), ['a_echo', 'b_touch']);
  const refused = await raw.request('tools/call', {
    name: 'a_echo',
    arguments: { path: '/x/../secret/key' },
  });
  assert.deepEqual(refused.error, {
    code: -32040,
    message: 'Call to a_echo refused by policy for these arguments',
    data: { reason: 'policy_denied' },
  });
  assert.ok((await raw.request('tools/call', { name: 'a_echo', arguments: { path: '/public' } })).result);
  assert.ok((await raw.request('tools/call', { name: 'b_touch', arguments: {} })).result);
  sameError(
    await raw.request('resources/read', { uri: 'a+probe://a/counter' }),
    await raw.request('resources/read', { uri: 'a+probe://a/nothing' }),
    'a+probe://a/counter',
    'a+probe://a/nothing',
  );
});

test('a backend that says it takes elicitation is never asked to approve its own call', async (t) => {
  const raw = await setup(t, {
    policy: {
      rules: [{ name: 'ask', callers: ['backend:r'], tools: ['echo'], effect: 'approve' }],
      // Were it asked, the call would wait and then expire: a different error.
      approval: { operator: false, timeoutMs: 1000 },
    },
  });
  await raw.request('initialize', {
    protocolVersion: '2025-11-25',
    capabilities: { elicitation: { form: {} } },
    clientInfo: { name: 'self-approver', version: '1' },
  });
  const answer = await raw.request('tools/call', { name: 'a_echo', arguments: {} });
  assert.equal((answer.error as { code: number }).code, -32040);
  assert.match(String((answer.error as { message: string }).message), /no one can be asked/);
  assert.ok(
    !raw.received.some((m) => m.method === 'elicitation/create'),
    'the calling backend was asked to approve its own call',
  );
});
