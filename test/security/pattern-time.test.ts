// Threat: one message stops the process for everyone. Operators write redaction patterns and
// policy `matches` conditions that look harmless (an e-mail address, a domain), but on a
// backtracking engine an unanchored `[A-Za-z0-9._%+-]+@…` over a long run of its own characters
// takes time quadratic in the run: 160 KB of hex held the event loop for 17 s, a megabyte for
// minutes. A backend answers such a run (a hash list, a hex dump) or a host sends one as an
// argument, and while the pattern runs no other host is answered. Switchboard runs on its own
// process here, so a stuck event loop shows as calls that never come back, and the test's own
// timeout (far above the linear engine's few hundred milliseconds) fails it.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { openHttp } from '../support/mcp-clients.js';
import { spawnSwitchboard } from '../support/switchboard-process.js';

const BULK_ECHO = fileURLToPath(new URL('../fixtures/bulk-echo-server.js', import.meta.url));
const LOOSE = fileURLToPath(new URL('../fixtures/loose-files-server.js', import.meta.url));
const EMAIL = '[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\.[A-Za-z]{2,}';
const CALL = { timeout: 120_000 };

const hex = (chars: number) => randomBytes(chars / 2).toString('hex');
const textOf = (result: unknown) =>
  ((result as { content: { type: string; text?: string }[] }).content[0]?.text ?? '') as string;

test(
  'a long run of a pattern’s own characters neither holds other hosts nor escapes redaction or policy',
  { timeout: 240_000 },
  async (t) => {
    const sb = await spawnSwitchboard(t, {
      servers: { bulk: { command: process.execPath, args: [BULK_ECHO] } },
      redaction: { patterns: [EMAIL] },
      policy: {
        rules: [
          { name: 'no-evil-mail', when: { text: { matches: '[0-9a-f]+@evil\\.example' } }, effect: 'deny' },
        ],
      },
    });
    const alice = await openHttp(sb.url, { name: 'alice' });
    const bob = await openHttp(sb.url, { name: 'bob' });
    t.after(() => Promise.all([alice.client.close(), bob.client.close()]));

    // A megabyte of hex with one address at its end: the whole run is searched before it.
    const run = hex(1 << 20);
    const answered = alice.client.callTool(
      { name: 'echo', arguments: { text: `${run} mail bob@example.com` } },
      CALL,
    );
    // Bob is answered while alice's result is scanned (or after: never held for minutes).
    assert.equal(
      textOf(await bob.client.callTool({ name: 'echo', arguments: { text: 'still here' } }, CALL)),
      'still here',
    );
    const out = textOf(await answered);
    assert.ok(!out.includes('bob@example.com'), 'the address reached the host');
    assert.equal(out, `${run} mail [REDACTED:pattern-1]`);

    // The same run as an argument, judged by the policy's condition: no match, so allowed, whole.
    const plain = hex(1 << 20);
    assert.equal(
      textOf(await alice.client.callTool({ name: 'echo', arguments: { text: plain } }, CALL)),
      plain,
    );
    // A match at the end of the run is still found, and denies: the echo never runs.
    const evil = `${hex(1 << 18)}@evil.example`;
    const denied = await alice.client.callTool({ name: 'echo', arguments: { text: evil } }, CALL).then(
      (result) => JSON.stringify(result),
      (err: Error) => err.message,
    );
    assert.ok(!denied.includes('@evil.example'), 'the denied call ran');
    assert.match(denied, /echo/);
  },
);

test('a resource URI built against a policy glob is judged in one pass', { timeout: 240_000 }, async (t) => {
  // `file:///*/secrets/*/*.key` as a backtracking expression is cubic in the "/secrets/" of a URI.
  const sb = await spawnSwitchboard(t, {
    servers: { files: { command: process.execPath, args: [LOOSE] } },
    policy: { rules: [{ name: 'no-keys', resources: ['file:///*/secrets/*/*.key'], effect: 'deny' }] },
  });
  const host = await openHttp(sb.url, { name: 'host' });
  t.after(() => host.client.close());
  const read = (uri: string) =>
    host.client.readResource({ uri }, CALL).then(
      (result) => JSON.stringify(result),
      (err: Error) => `refused: ${err.message}`,
    );
  const long = `file:///${'/secrets/'.repeat(20_000)}x`;
  // Not a key: allowed, so the backend answers it (it has no such file).
  assert.match(await read(long), /not found/i);
  assert.match(await read(`file:///srv/secrets/a/b.key`), /^refused: /);
  assert.equal(await read(`file:///srv/public/readme.txt`).then((r) => r.includes('public note')), true);
});
