// `switchboard policy test` on switchboard's own tools: the meta-tools, judged as tools of the
// server `switchboard` as the meta stage judges them, and workflows, whose steps it judges for the
// given caller by the grants they run with, agreeing with what a real run does.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runPolicy } from '../../src/cli/policy.js';
import { captureIo } from '../trust/helpers.js';
import { connectHttp } from '../support/mcp-clients.js';
import { httpUrl } from '../support/start-switchboard.js';
import { fixture, setup } from '../workflows/harness.js';

async function configFile(t: TestContext, text: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'sb-policy-builtins-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'sb.yaml');
  await writeFile(file, text);
  return file;
}

async function policyTest(config: string, ...argv: string[]) {
  const io = captureIo();
  const code = await runPolicy(['test', '--config', config, ...argv], io.io);
  return { code, out: io.out, err: io.err };
}

const META = `servers:
  notes: { command: node, args: [notes.js] }
  search: { command: node, args: [search.js] }
catalog:
  mode: search
  codeMode: { enabled: true }
  profiles:
    plain: { mode: full, codeMode: { enabled: false } }
policy:
  rules:
    - { name: no-scripts-for-ci, callers: ['host:key:ci'], backends: [switchboard], tools: [run_script], effect: deny }
    - { name: approve-calls, callers: ['host:key:ci'], backends: [switchboard], tools: [call_tool], effect: approve }
`;

test('a meta-tool is judged as a tool of the server switchboard: its rule, or defaults.meta', async (t) => {
  const config = await configFile(t, META);
  const ci = await policyTest(config, '--caller', 'key:ci', '--tool', 'run_script', '--expect', 'deny');
  assert.equal(ci.code, 0, ci.err.join('\n'));
  assert.equal(ci.out[0], 'host:key:ci -> tool run_script of server switchboard (tools/call)');
  assert.match(ci.out[1]!, /meta-tool of switchboard, listed: catalog\.codeMode\.enabled is true/);
  assert.equal(ci.out.at(-1), 'decision: deny (rule no-scripts-for-ci)');

  const approve = await policyTest(config, '--caller', 'key:ci', '--tool', 'call_tool');
  assert.equal(approve.out.at(-1), 'decision: approve (rule approve-calls)');

  // No rule names it for this caller: the meta stage's fallback, defaults.meta.
  const other = await policyTest(config, '--caller', 'key:other', '--tool', 'run_script', '--json');
  const json = JSON.parse(other.out[0]!);
  assert.equal(json.effect, 'allow');
  assert.equal(json.rule, 'defaults.meta');
  assert.deepEqual(json.subject, {
    kind: 'tool',
    backend: 'switchboard',
    name: 'run_script',
    exposed: 'run_script',
    method: 'tools/call',
    builtIn: true,
  });
  assert.deepEqual(json.meta, { listed: true, why: 'catalog.codeMode.enabled is true' });

  // The listing is judged as the view stage asks it (metaListed: policy.visible).
  const listed = await policyTest(config, '--caller', 'key:ci', '--tool', 'run_script', '--list');
  assert.equal(listed.out.at(-1), 'decision: deny (rule no-scripts-for-ci)');
});

test('the meta-tools are also named as policy names them: --backend switchboard, switchboard_<name>', async (t) => {
  const config = await configFile(t, META);
  for (const argv of [
    ['--backend', 'switchboard', '--tool', 'run_script'],
    ['--tool', 'switchboard_run_script'],
  ]) {
    const r = await policyTest(config, '--caller', 'key:ci', ...argv);
    assert.equal(r.code, 0, r.err.join('\n'));
    assert.equal(r.out[0], 'host:key:ci -> tool run_script of server switchboard (tools/call)');
    assert.equal(r.out.at(-1), 'decision: deny (rule no-scripts-for-ci)');
  }
  const wrong = await policyTest(config, '--caller', 'key:ci', '--backend', 'switchboard', '--tool', 'nope');
  assert.equal(wrong.code, 1);
  assert.match(wrong.err.join('\n'), /no enabled server named "switchboard"/);
});

test("a meta-tool's name in a view that does not list it is the backend tool it names there", async (t) => {
  const config = await configFile(t, META);
  // In the plain profile search mode is off: search_tools is search's tool `tools`, as a call routes it.
  const r = await policyTest(config, '--caller', 'key:ci', '--profile', 'plain', '--tool', 'search_tools');
  assert.equal(r.out[0], 'host:key:ci -> tool tools of server search (tools/call)');
  assert.equal(r.out.at(-1), 'decision: allow (rule defaults.host)');
  // No server can own run_script there: it is still judged (and said to be unlisted).
  const s = await policyTest(config, '--caller', 'key:ci', '--profile', 'plain', '--tool', 'run_script');
  assert.match(s.out[1]!, /not listed .*catalog\.profiles\.plain\.codeMode\.enabled is false/);
  assert.equal(s.out.at(-1), 'decision: deny (rule no-scripts-for-ci)');
  const none = await policyTest(config, '--caller', 'key:ci', '--profile', 'nope', '--tool', 'run_script');
  assert.equal(none.code, 1);
  assert.match(none.err[0]!, /no profile named "nope"/);
});

const WORKFLOWS = `servers:
  notes: { command: node, args: [notes.js] }
  search: { command: node, args: [search.js] }
namespacing: { mode: always }
policy:
  defaults: { host: allow }
  rules:
    - { name: http-reads-only, callers: ['host:http'], backends: [notes], tools: [write_note], effect: deny }
    - { name: secret-search, callers: ['host:http'], backends: [search], tools: [query], when: { q: { prefix: secret } }, effect: deny }
    - { name: no-vault-for-workflows, callers: ['workflow:*'], handlers: ['vault.*'], effect: deny }
workflows:
  publish:
    grants: both
    steps:
      - { id: find, tool: search_query, args: { q: input.text } }
      - { id: save, tool: notes_write_note, args: { body: steps.find.text }, needs: [find] }
      - { id: read, tool: notes_write_note, grants: workflow }
  tolerant:
    grants: caller
    steps:
      - { id: save, tool: notes_write_note, onError: continue }
  own:
    steps:
      - { id: sign, handler: vault.sign }
`;

test('a workflow: its grants mode, and each step the caller would be refused, by name and rule', async (t) => {
  const config = await configFile(t, WORKFLOWS);
  const r = await policyTest(
    config,
    '--caller',
    'http',
    '--tool',
    'workflows_publish',
    '--args',
    '{"text":"hi"}',
  );
  assert.equal(r.code, 0, r.err.join('\n'));
  assert.equal(r.out[0], 'host:http -> tool publish of server workflows (tools/call)');
  assert.deepEqual(r.out.slice(r.out.indexOf('decision: allow (rule defaults.host)')), [
    'decision: allow (rule defaults.host)',
    'workflow publish runs its steps with grants: both',
    '  step find: tool search_query: allow (rule defaults.workflow + runFor:defaults.host)',
    '  step save: tool notes_write_note: deny (rule runFor:http-reads-only): host:http is not granted it itself; a run would fail at this step',
    '  step read (grants: workflow): tool notes_write_note: allow (rule defaults.workflow)',
  ]);
  // The step's arguments come from the input: with a secret query the first step is refused.
  const secret = await policyTest(
    config,
    '--caller',
    'http',
    '--tool',
    'workflows_publish',
    '--args',
    '{"text":"secret x"}',
    '--json',
  );
  const steps = JSON.parse(secret.out[0]!).workflow.steps;
  assert.deepEqual(steps[0], {
    step: 'find',
    grants: 'both',
    target: 'tool search_query',
    effect: 'deny',
    rule: 'runFor:secret-search',
    refusedBy: 'caller',
  });
  // Without the input the condition cannot be judged: left to the run, naming the rule.
  const unknown = await policyTest(config, '--caller', 'http', '--tool', 'workflows_publish');
  assert.ok(unknown.out.includes('  step find: tool search_query: decided at run time (rule secret-search)'));
  // Another caller is granted every step.
  const stdio = await policyTest(config, '--caller', 'stdio', '--backend', 'workflows', '--tool', 'publish');
  assert.ok(
    stdio.out.includes(
      '  step save: tool notes_write_note: allow (rule defaults.workflow + runFor:defaults.host)',
    ),
  );
});

test("grants: caller, a step that goes on after a refusal, and the workflow's own grants", async (t) => {
  const config = await configFile(t, WORKFLOWS);
  const tolerant = await policyTest(config, '--caller', 'http', '--tool', 'workflows_tolerant');
  assert.equal(
    tolerant.out.at(-1),
    '  step save: tool notes_write_note: deny (rule runFor:http-reads-only): host:http is not granted it itself; the step would end with an error and the run go on (onError: continue)',
  );
  const own = await policyTest(config, '--caller', 'http', '--tool', 'workflows_own');
  assert.equal(own.out.at(-2), 'workflow own runs its steps with grants: workflow');
  assert.equal(
    own.out.at(-1),
    '  step sign: handler vault.sign: deny (rule no-vault-for-workflows): workflow:own is not granted it; a run would fail at this step',
  );
});

test('the step policy test names as refused is the step a real run fails at, with the same rule', async (t) => {
  const hostNoRecord = {
    name: 'host-no-record',
    callers: ['host:*'],
    backends: ['fx'],
    tools: ['record'],
    effect: 'deny' as const,
  };
  const workflows = {
    publish: {
      grants: 'both' as const,
      steps: [
        { id: 'sum', tool: 'fx_add', args: { a: '1', b: '2' } },
        { id: 'rec', tool: 'fx_record', args: { value: 'string(steps.sum.data.sum)' }, needs: ['sum'] },
      ],
    },
  };
  const s = await setup(t, { workflows, policy: { rules: [hostNoRecord] } });
  const config = await configFile(
    t,
    JSON.stringify({
      servers: { fx: fixture(s.journal) },
      namespacing: { mode: 'always' },
      workflows,
      policy: { rules: [hostNoRecord] },
    }),
  );
  const explained = await policyTest(config, '--caller', 'http', '--tool', 'workflows_publish', '--json');
  const steps = JSON.parse(explained.out[0]!).workflow.steps as {
    step: string;
    refusedBy?: string;
    rule: string;
  }[];
  const refused = steps.filter((x) => x.refusedBy);
  assert.deepEqual(
    refused.map((x) => [x.step, x.rule]),
    [['rec', 'runFor:host-no-record']],
  );

  const { client } = await connectHttp(t, httpUrl(s.sb));
  const r = await client.callTool({ name: 'workflows_publish', arguments: {} });
  assert.equal(r.isError, true);
  assert.match(
    JSON.stringify(r.content),
    /step rec failed: Step rec of workflow publish runs with grants: both/,
  );
  assert.deepEqual(s.lines(), ['add 1 2']);
});
