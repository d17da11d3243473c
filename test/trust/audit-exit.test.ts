// Records still queued for their batch when the process exits are written by the exit handler:
// the writer's thread still runs there, and the flush waits for it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { openTrustDb } from '../../src/trust/trust-db.js';
import { tempDbPath } from './helpers.js';

const run = promisify(execFile);
const src = (path: string) => new URL(`../../src/${path}`, import.meta.url).href;

/** A process that opens the trust files, ends `n` calls and leaves by `exit`. */
function script(dbPath: string, n: number, exit: 'process.exit' | 'empty loop'): string {
  return `
    import { parseConfig } from ${JSON.stringify(src('config/load.js'))};
    import { openTrust } from ${JSON.stringify(src('trust/trust.js'))};
    import { silentLogger } from ${JSON.stringify(src('log.js'))};
    const { config } = parseConfig(JSON.stringify({ audit: { path: ${JSON.stringify(dbPath)} } }), 'inline.json');
    const trust = openTrust(config, silentLogger);
    for (let i = 0; i < ${n}; i++) {
      trust.audit.ended({
        callId: 'call-' + i, caller: { kind: 'host', id: 'stdio' }, method: 'tools/call',
        params: { name: 't', arguments: { i } }, target: { backend: 'b', name: 't', kind: 'tool' },
        decision: { effect: 'allow', rule: 'grant' },
        reply: { sessionKey: 'session', era: 'legacy', capabilities: {} },
      }, 1, undefined);
    }
    ${exit === 'process.exit' ? 'process.exit(0);' : ''}
  `;
}

for (const exit of ['process.exit', 'empty loop'] as const) {
  test(`records queued when the process ends (${exit}) are in the chain`, async (t) => {
    const path = await tempDbPath(t);
    await run(process.execPath, ['--input-type=module', '-e', script(path, 700, exit)]);
    const db = openTrustDb(path, { readonly: true });
    t.after(() => db.close());
    const { n } = db.prepare('SELECT count(*) AS n FROM audit').get() as { n: number };
    assert.equal(n, 700);
  });
}
