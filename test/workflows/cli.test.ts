// `switchboard workflows`: list and run from a config file, runs and show from the state
// database, and cancel, which stops a run under way in another switchboard (its step's call is
// cancelled at the backend).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { spawnSync } from 'node:child_process';
import { runWorkflows } from '../../src/cli/workflows.js';
import { openStateDb } from '../../src/state/state-db.js';
import { RunStore } from '../../src/workflows/run-store.js';
import { localTokenFor, localTokenPath } from '../../src/front/http-auth.js';
import { connectHttp } from '../support/mcp-clients.js';
import { eventually, until } from '../support/poll.js';
import { httpUrl } from '../support/start-switchboard.js';
import { fixture, setup } from './harness.js';

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (l: string) => void out.push(l), err: (l: string) => void err.push(l) } };
}

test('list, run (in process from --config), runs and show', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-wf-cli-'));
  const file = join(dir, 'switchboard.json');
  writeFileSync(
    file,
    JSON.stringify({
      servers: { fx: fixture(join(dir, 'journal.log')) },
      namespacing: { mode: 'always' },
      state: { path: join(dir, 'state.sqlite') },
      audit: { enabled: false },
      bridge: { enabled: false },
      workflows: {
        sum: {
          description: 'adds',
          input: { type: 'object', properties: { a: { type: 'number' } }, required: ['a'] },
          steps: [{ id: 's', tool: 'fx_add', args: { a: 'input.a', b: '1' } }],
          output: 'string(steps.s.data.sum)',
        },
      },
    }),
  );
  const list = io();
  assert.equal(await runWorkflows(['list', '--config', file], list.io), 0);
  assert.match(list.out.join('\n'), /^workflows_sum {2}1 steps \(s\) {2}adds$/);
  const ran = io();
  assert.equal(
    await runWorkflows(['run', 'sum', '--args', '{"a": 41}', '--config', file], ran.io),
    0,
    ran.err.join('\n'),
  );
  const result = JSON.parse(ran.out.join('\n')) as { content: { text: string }[] };
  assert.equal(result.content[0]!.text, '42');
  const runs = io();
  assert.equal(await runWorkflows(['runs', '--config', file, '--json'], runs.io), 0);
  const row = JSON.parse(runs.out[0]!) as { id: string; status: string; caller: string };
  assert.deepEqual([row.status, row.caller], ['succeeded', 'host:cli']);
  const show = io();
  assert.equal(await runWorkflows(['show', row.id, '--config', file], show.io), 0);
  assert.match(show.out.join('\n'), /\n {2}s {2}done {2}\{"sum":42\}/);
  const usage = io();
  assert.equal(await runWorkflows(['run'], usage.io), 2);
});

test('cancel stops a run under way in a running switchboard, its step cancelled at the backend', async (t) => {
  const s = await setup(t, {
    workflows: { slow: { steps: [{ id: 'w', tool: 'fx_slow_once', args: { ms: '30000', tag: '"c"' } }] } },
  });
  const { client } = await connectHttp(t, httpUrl(s.sb));
  const call = client.callTool({ name: 'workflows_slow', arguments: {} });
  await until(() => (s.lines().includes('slow_once c start') ? true : undefined), 'the step to start');
  const state = join(s.dir, 'state.sqlite');
  const runs = io();
  await runWorkflows(['runs', '--state', state, '--json'], runs.io);
  const id = (JSON.parse(runs.out[0]!) as { id: string }).id;
  const cancel = io();
  assert.equal(await runWorkflows(['cancel', id, '--state', state], cancel.io), 0, cancel.err.join('\n'));
  const r = await call;
  assert.equal(r.isError, true);
  assert.match(JSON.stringify(r.content), /was cancelled/);
  await until(
    () => (s.lines().includes('cancelled') ? true : undefined),
    'the backend to hear the cancellation',
  );
  const show = io();
  await runWorkflows(['show', id, '--state', state, '--json'], show.io);
  const shown = JSON.parse(show.out[0]!) as { status: string; steps: { step: string; status: string }[] };
  assert.equal(shown.status, 'cancelled');
  // The step under way is not left 'started' by a run that ended.
  assert.deepEqual(
    shown.steps.map((st) => [st.step, st.status]),
    [['w', 'cancelled']],
  );
});

test('run --url reaches a switchboard on its default local token without --token; elsewhere it is not sent', async (t) => {
  const s = await setup(t, {
    http: { auth: { mode: 'local' } },
    workflows: { sum: { steps: [{ id: 's', tool: 'fx_add', args: { a: '1', b: '2' } }] } },
  });
  const ran = io();
  const args = ['run', 'sum', '--url', httpUrl(s.sb)];
  const hosts = () => [...s.sb.gateway.sessions.values()].filter((x) => x.caller.kind === 'host').length;
  const before = hosts();
  assert.equal(await runWorkflows(args, ran.io), 0, ran.err.join('\n'));
  assert.doesNotMatch(ran.out.join('\n'), /"isError":true/);
  // Its session ended with it: runs from a cron job do not pile up against the caller's cap.
  await eventually('the run to end its session', () => hosts() === before);
  // The file's token goes only to a loopback port a running front holds (either loopback
  // address): never to a switchboard on another machine, nor to another listener on this one.
  const token = readFileSync(localTokenPath(), 'utf8').trim();
  const port = new URL(httpUrl(s.sb)).port;
  assert.equal(localTokenFor(`http://localhost:${port}/mcp`), token);
  assert.equal(localTokenFor(`http://[::1]:${port}/other`), token);
  assert.equal(
    localTokenFor(`http://127.0.0.2:${port}/mcp`),
    undefined,
    'a loopback address it does not hold',
  );
  assert.equal(localTokenFor(`http://sb.example.com:${port}/mcp`), undefined);
  assert.equal(localTokenFor(`http://10.0.0.5:${port}/mcp`), undefined);
  // A backend's own server on loopback, named by mistake: asked, it hears no token.
  const heard: (string | undefined)[] = [];
  const other = createServer((req, res) => {
    heard.push(req.headers.authorization);
    res.writeHead(401, { 'content-type': 'text/plain' }).end('Unauthorized');
  });
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => other.close(() => resolve())));
  const otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}/mcp`;
  assert.equal(localTokenFor(otherUrl), undefined);
  const misled = io();
  assert.equal(await runWorkflows(['run', 'sum', '--url', otherUrl], misled.io), 1);
  assert.ok(heard.length > 0, 'the other server was asked');
  assert.deepEqual(
    heard.filter((h) => h !== undefined),
    [],
    'no Authorization header reached it',
  );
  assert.match(misled.err.join('\n'), /no switchboard of this user's is noted as serving/);
  // A given --token is used as given; a refusal says what was sent and what to do.
  const refused = io();
  assert.equal(await runWorkflows(['run', 'sum', '--url', httpUrl(s.sb), '--token', 'wrong'], refused.io), 1);
  assert.match(
    refused.err.join('\n'),
    /^switchboard workflows run: http:\S+ refused the call: the --token given was refused\. Pass --token KEY, or run with the XDG_STATE_HOME of the switchboard there$/,
  );
  // Once the front has closed, its port is nobody's to trust.
  await s.sb.stop();
  assert.equal(localTokenFor(`http://127.0.0.1:${port}/mcp`), undefined);
});

test('cancel of a run whose switchboard is gone ends it here, its step under way too; a restart would not resume it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sb-wf-stranded-'));
  const state = join(dir, 'state.sqlite');
  const db = openStateDb(state);
  const store = new RunStore(db);
  const gone = spawnSync(process.execPath, ['-e', '']).pid!;
  const stranded = store.create('slow', 'host:http', {});
  store.stepStarted(stranded, 'wait', 1);
  db.prepare('UPDATE workflow_runs SET owner_pid = ? WHERE id = ?').run(gone, stranded);
  db.close();
  const cancel = io();
  assert.equal(
    await runWorkflows(['cancel', stranded, '--state', state], cancel.io),
    0,
    cancel.err.join('\n'),
  );
  assert.match(cancel.out.join('\n'), new RegExp(`no switchboard was running it: process ${gone} is gone`));
  const show = io();
  await runWorkflows(['show', stranded, '--state', state, '--json'], show.io);
  const shown = JSON.parse(show.out[0]!) as { status: string; steps: { step: string; status: string }[] };
  assert.equal(shown.status, 'cancelled');
  assert.deepEqual(
    shown.steps.map((st) => [st.step, st.status]),
    [['wait', 'cancelled']],
  );
});
