// Attacker-style: a host denied a context scope by policy tries to see it as MCP resources — by
// listing (whole and paged), reading (every spelling of the URI), completing, subscribing (legacy
// resources/subscribe and modern subscriptions/listen) — while the scope's canary value changes.
// Nothing it receives may hold the canary, and each refusal reads as a resource that does not exist.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { initialize, rawStdio } from '../gateway/harness.js';
import { contextConfig, put, type Obj } from '../context/resources-helpers.js';
import { until } from '../support/poll.js';

const CANARY = 'canary-7f3e9c1d-context';

const MODERN = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'modern-host', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

test('a host denied a context scope never receives its canary: lists, reads, completions, subscriptions', async (t) => {
  const input = contextConfig({
    catalog: { pageSize: 1 },
    context: { resources: { scopes: ['global', 'team:secret'] } },
    policy: {
      rules: [
        {
          name: 'no-secret-scope',
          callers: ['host:*'],
          backends: ['context'],
          resources: ['context://team:secret/*'],
          effect: 'deny',
        },
      ],
    },
  } as never);
  const { sb, write, inbox } = await rawStdio(t, input);
  await put(sb, 'team:secret', 'token', { value: CANARY });
  await put(sb, 'team:secret', CANARY, 'key named by the canary');
  await put(sb, 'global', 'open', 'visible');

  let id = 0;
  const ask = async (method: string, params: Obj = {}, modern = false): Promise<Obj> => {
    const n = ++id;
    write(
      JSON.stringify({
        jsonrpc: '2.0',
        id: n,
        method,
        params: modern ? { ...params, _meta: MODERN } : params,
      }),
    );
    return inbox.next((m) => m.id === n);
  };
  write(initialize());
  await inbox.next((m) => m.id === 'init');
  write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));

  // Lists, page by page in both eras: the open scope is there, the secret one is not.
  const listAll = async (modern: boolean): Promise<string[]> => {
    const uris: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 50; pages++) {
      const r = (await ask('resources/list', cursor ? { cursor } : {}, modern)).result as Obj;
      uris.push(...(r.resources as Obj[]).map((x) => x.uri as string));
      cursor = r.nextCursor as string | undefined;
      if (!cursor) break;
    }
    return uris;
  };
  // Lists are read again shortly after keys come and go: wait until the writes above are in them.
  await until(
    async () => ((await listAll(false)).includes('context://global/open') ? true : undefined),
    'the list',
  );
  for (const modern of [false, true]) {
    const uris = await listAll(modern);
    assert.ok(uris.includes('context://global/open'), `${modern ? 'modern' : 'legacy'} list: ${uris}`);
    assert.ok(!uris.some((u) => u.includes('secret')), `${modern ? 'modern' : 'legacy'} list: ${uris}`);
  }

  // Reads by every spelling answer exactly as a key that does not exist.
  const absent = (await ask('resources/read', { uri: 'context://global/absent' })).error as Obj;
  assert.equal(absent.code, -32002);
  const spellings = [
    'context://team:secret/token',
    'CONTEXT://team:secret/token',
    'context://TEAM:secret/token',
    'context://team%3Asecret/token',
    'context://team:secret/./token',
    'context://team:secret/x/../token',
    'context://team:secret/%74oken',
    'context://global/../team:secret/token',
    'context+context://team:secret/token',
  ];
  for (const modern of [false, true]) {
    for (const uri of spellings) {
      const answer = await ask('resources/read', { uri }, modern);
      assert.ok(answer.error, `${uri} was read: ${JSON.stringify(answer)}`);
      assert.ok([-32002, -32602].includes(answer.error.code), `${uri}: ${JSON.stringify(answer.error)}`);
    }
  }
  await ask('completion/complete', {
    ref: { type: 'ref/resource', uri: 'context://{scope}/{key}' },
    argument: { name: 'scope', value: 'team' },
  });

  // Subscriptions: refused (legacy) and not acknowledged (modern); then the canary changes.
  const sub = await ask('resources/subscribe', { uri: 'context://team:secret/token' });
  assert.equal(sub.error?.code, -32002);
  const listenId = ++id;
  write(
    JSON.stringify({
      jsonrpc: '2.0',
      id: listenId,
      method: 'subscriptions/listen',
      params: {
        notifications: {
          resourcesListChanged: true,
          resourceSubscriptions: ['context://team:secret/token', 'context://global/open'],
        },
        _meta: MODERN,
      },
    }),
  );
  const ack = await inbox.next((m) => m.method === 'notifications/subscriptions/acknowledged');
  assert.deepEqual((ack.params as Obj).notifications.resourceSubscriptions, ['context://global/open']);
  await put(sb, 'team:secret', 'token', { value: `${CANARY}-2` });
  await put(sb, 'team:secret', `${CANARY}-new`, CANARY);
  await put(sb, 'global', 'open', 'changed');
  // The allowed change arrives; everything sent before it has been seen.
  await inbox.next((m) => m.method === 'notifications/resources/updated');
  await ask('ping');

  const wire = JSON.stringify(inbox.items);
  assert.doesNotMatch(wire, new RegExp(CANARY), 'the canary (a value and a key name) reached the host');
  // Refusals echo the URI the host sent itself; nothing else may name the denied scope.
  const unasked = JSON.stringify(inbox.items.filter((m) => !('error' in m)));
  assert.doesNotMatch(unasked, /team:secret|team%3Asecret/i, 'the denied scope was named to the host');
});
