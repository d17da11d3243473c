// Attack: a backend holding a vault secret writes it on stderr in the two shapes the log's own
// redaction cannot see. A secret written over several lines (a PEM key, a credentials file) is
// read a line at a time: no line holds it whole. A secret a structured logger wrote JSON-escaped
// (`pa\"ss`) is escaped a second time when the log serialises the line, into a form none of its
// needles has. Neither may reach the log or the stderr lines kept for status and the dashboard.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { makeVault } from '../vault/make-vault.js';
import { captureLog } from '../support/log-capture.js';
import { eventually } from '../support/poll.js';
import { startGateway } from '../support/start-switchboard.js';

const BACKEND = `
const s = process.env.SECRET;
process.stderr.write('key is: ' + s + '\\n');
process.stderr.write(JSON.stringify({ level: 'info', config: { apiKey: s } }) + '\\n');
process.stderr.write('done writing\\n');
let buf = '';
process.stdin.on('data', (c) => {
  buf += c;
  for (let nl; (nl = buf.indexOf('\\n')) !== -1; ) {
    const m = JSON.parse(buf.slice(0, nl));
    buf = buf.slice(nl + 1);
    if (m.id === undefined) continue;
    const result = m.method === 'initialize'
      ? { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'b', version: '1' } }
      : m.method === 'tools/list' ? { tools: [] } : {};
    process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }) + '\\n');
  }
});
`;

test('a secret written on stderr over several lines, or JSON-escaped, reaches neither the log nor the kept stderr', async (t) => {
  const body = randomBytes(48).toString('base64');
  // Several lines, and the characters a JSON encoder escapes.
  const secret = `-----BEGIN KEY-----\n${body.slice(0, 32)}\n${body.slice(32)}"q\\${randomBytes(4).toString('hex')}\n-----END KEY-----`;
  const dir = mkdtempSync(join(tmpdir(), 'sb-stderr-secret-'));
  const script = join(dir, 'backend.cjs');
  writeFileSync(script, BACKEND);
  const vault = makeVault(dir, { canary: secret });
  const log = captureLog('debug');
  const sb = await startGateway(
    t,
    {
      servers: {
        b: {
          command: process.execPath,
          args: [script],
          secrets: { SECRET: 'canary' },
          sandbox: { read: [dir] },
        },
      },
      vault: { file: vault.file, keyFile: vault.keyFile },
    },
    { log: log.logger },
  );
  await sb.ready;
  await eventually('the backend wrote its last stderr line', () => log.text().includes('done writing'));
  const kept = sb.gateway.backends.get('b')!.lastStderr.join('\n');
  assert.match(kept, /REDACTED:canary/);
  // Every line of the secret long enough to tell, in any escaping, and the secret's body.
  const telltales = [body.slice(0, 32), body.slice(32), body.slice(8, 24)];
  for (const place of [log.text(), kept])
    for (const piece of telltales) assert.ok(!place.includes(piece), `"${piece}" got out`);
});
