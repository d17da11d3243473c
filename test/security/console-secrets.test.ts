// Attack: a library switchboard uses prints a peer's bytes with console (the A2A client prints a
// stream event it could not parse, whole, with V8's parse error beside it). In `up`, console goes
// to the log: to stderr through the redactor, never to stdout (JSON-RPC in stdio mode), and the
// parse error's quote of the text, which would hold a piece of the secret, is dropped.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';

const LOG_MODULE = new URL('../../src/log.js', import.meta.url).href;

test("what a library prints with console reaches stderr redacted, stdout never, and a parse error's quote not at all", () => {
  const secret = `Zq9${randomBytes(12).toString('hex')}`;
  const event = `{"result":{"x":"pp","k":${secret}}}`;
  const script = `
    import { createLogger, routeConsole } from ${JSON.stringify(LOG_MODULE)};
    const secret = process.env.SECRET;
    const redactor = { active: true, text: (line) => line.split(secret).join('[REDACTED:canary]') };
    routeConsole(createLogger('debug', redactor));
    const event = process.env.EVENT;
    let parseError;
    try { JSON.parse(event); } catch (err) { parseError = err; }
    console.error('Failed to parse SSE event data:', event, parseError);
    console.log('printed with console.log:', secret);
    console.warn({ token: secret });
  `;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...process.env, SECRET: secret, EVENT: event },
    encoding: 'utf8',
  });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout, '', 'nothing on stdout');
  const lines = run.stderr.trim().split('\n');
  assert.equal(lines.length, 3, run.stderr);
  assert.match(lines[0]!, /"level":50.*Failed to parse SSE event data.*\[REDACTED:canary\].*not valid JSON/);
  assert.match(lines[1]!, /"level":30.*printed with console.log: \[REDACTED:canary\]/);
  for (let i = 0; i + 6 <= secret.length; i++) {
    const piece = secret.slice(i, i + 6);
    assert.ok(!run.stderr.includes(piece), `"${piece}" of the secret got out: ${run.stderr}`);
  }
});
