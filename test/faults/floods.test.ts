// Floods: a child's stderr is rate-limited with what was dropped counted; a backend flooding
// notifications does not stop it or anyone else from answering.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { pino } from 'pino';
import { Config } from '../../src/config/schema.js';
import { startSwitchboard } from '../../src/switchboard.js';
import { probe } from '../gateway/harness.js';
import { connect, eventually, faulty, json, start } from './helpers.js';

test("a child's stderr flood is logged up to its burst and the rest is counted as suppressed", async (t) => {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString('utf8').split('\n'))
        if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  const config = Config.parse({
    servers: { f: faulty(['--stderr-flood', '1000'], { stderr: { linesPerSecond: 0, burst: 10 } }) },
    http: { port: 0 },
  });
  const sb = await startSwitchboard({ config, http: true, log: pino({ level: 'info' }, sink) });
  t.after(() => sb.stop());
  const client = await connect(t, sb);
  assert.ok(json(await client.callTool({ name: 'echo', arguments: {} })));
  await client.close();
  await sb.stop();
  const logged = () => lines.filter((l) => l.msg === 'backend stderr' && l.backend === 'f').length;
  const suppressed = () =>
    lines
      .filter((l) => l.backend === 'f')
      .reduce((n, l) => n + (typeof l.suppressed === 'number' ? l.suppressed : 0), 0);
  await eventually('every line to be logged or counted', () => logged() + suppressed() === 1000);
  assert.equal(logged(), 10);
});

test('a backend flooding notifications still answers, and so do the others', async (t) => {
  const sb = await start(t, { servers: { f: faulty(), b: probe('b') } });
  const client = await connect(t, sb);
  await client.setLoggingLevel('debug');
  const flood = client.callTool({ name: 'f_flood', arguments: { count: 20_000 } });
  assert.equal(json(await client.callTool({ name: 'b_echo', arguments: {} })).server, 'b');
  assert.equal(json(await flood).sent, 20_000);
  assert.deepEqual(json(await client.callTool({ name: 'f_echo', arguments: { x: 1 } })).arguments, { x: 1 });
});
