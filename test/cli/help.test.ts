// Every command and subcommand answers --help (and -h) with its usage and exit 0, without doing
// anything; an unknown option or a bad log setting is a usage error (exit 2), never a stack trace;
// a reader that closes the pipe early ends the command quietly.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { MAIN, runCli } from './run-cli.js';

const COMMANDS: readonly (readonly string[])[] = [
  [],
  ['help'],
  ['up'],
  ['up', '--stdio'],
  ['init'],
  ['validate'],
  ['doctor'],
  ['audit'],
  ['audit', 'tail'],
  ['audit', 'query'],
  ['audit', 'verify'],
  ['pins'],
  ['pins', 'list'],
  ['pins', 'diff'],
  ['pins', 'approve'],
  ['vault'],
  ['vault', 'init'],
  ['vault', 'set'],
  ['vault', 'list'],
  ['vault', 'rm'],
  ['vault', 'rotate'],
  ['policy'],
  ['policy', 'test'],
  ['approvals'],
  ['approvals', 'list'],
  ['approvals', 'approve'],
  ['approvals', 'deny'],
  ['keys'],
  ['keys', 'new'],
  ['keys', 'new', 'ci-agent'],
  ['keys', 'hash'],
];

test('--help and -h on every command and subcommand print its usage and exit 0', async (t) => {
  // A state directory of its own: a command that wrongly ran instead of helping would write there.
  const state = await mkdtemp(join(tmpdir(), 'sb-help-'));
  t.after(() => rm(state, { recursive: true, force: true }));
  const env = { ...process.env, XDG_STATE_HOME: state };
  for (const command of COMMANDS) {
    for (const flag of ['--help', '-h']) {
      const args = [...command, flag];
      const run = await runCli(args, { env, cwd: state });
      assert.equal(run.code, 0, `switchboard ${args.join(' ')} exited ${run.code}: ${run.stderr}`);
      assert.match(run.stdout, /^Usage: switchboard/, `switchboard ${args.join(' ')} printed no usage`);
      if (command[0] !== undefined && command[0] !== 'help')
        assert.match(run.stdout, new RegExp(`switchboard ${command[0]}`), `the usage of ${args.join(' ')}`);
    }
  }
});

test('an unknown option is a usage error naming it, exit 2', async () => {
  for (const command of [
    ['up'],
    ['validate'],
    ['init'],
    ['doctor'],
    ['keys', 'new', 'x'],
    ['audit', 'tail'],
    ['pins', 'list'],
  ]) {
    const run = await runCli([...command, '--frobnicate']);
    assert.equal(run.code, 2, `${command.join(' ')}: ${run.stderr}`);
    assert.match(run.stderr, /--frobnicate/);
    assert.match(run.stderr, /Usage: switchboard/);
    assert.doesNotMatch(run.stderr, /\n\s+at /, 'no stack trace');
  }
  const unknown = await runCli(['frobnicate']);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /unknown command "frobnicate"/);
  // Names every object answers to are no commands either.
  for (const name of ['constructor', 'toString']) {
    const odd = await runCli([name]);
    assert.equal(odd.code, 2, odd.stderr);
    assert.match(odd.stderr, new RegExp(`unknown command "${name}"`));
  }
});

test('an invalid log level or format, from a flag or the environment, is a clear usage error', async () => {
  const cases: [string[], NodeJS.ProcessEnv, RegExp][] = [
    [
      ['up', '--log-level', 'loud'],
      {},
      /--log-level expects one of trace, debug, info, warn, error, fatal, silent, got "loud"/,
    ],
    [['up'], { SWITCHBOARD_LOG_LEVEL: 'chatty' }, /SWITCHBOARD_LOG_LEVEL expects one of .*got "chatty"/],
    [['up', '--log-format', 'xml'], {}, /--log-format expects one of pretty, json, got "xml"/],
    [
      ['up'],
      { SWITCHBOARD_LOG_FORMAT: 'yaml' },
      /SWITCHBOARD_LOG_FORMAT expects one of pretty, json, got "yaml"/,
    ],
  ];
  for (const [args, extra, message] of cases) {
    const run = await runCli([...args, '--port', '0'], { env: { ...process.env, ...extra } });
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, message);
    assert.doesNotMatch(run.stderr, /\n\s+at /, 'no stack trace');
  }
});

test('--version prints the version', async () => {
  const run = await runCli(['--version']);
  assert.equal(run.code, 0);
  assert.match(run.stdout, /^\d+\.\d+\.\d+/);
});

test('a reader that closes the pipe early ends a command quietly, not on an EPIPE stack trace', async () => {
  // `switchboard pins --help | head -1`: here the reader is gone before the command writes at all.
  for (const args of [['--help'], ['audit', '--help'], ['pins', 'list', '--help']]) {
    const child = spawn(process.execPath, [MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const [code] = (await once(child, 'close')) as [number | null];
    assert.equal(code, 0, `${args.join(' ')}: ${stderr}`);
    assert.equal(stderr, '', args.join(' '));
  }
});

test('a mistyped option is named with the nearest known one, by commands and subcommands alike', async () => {
  const up = await runCli(['up', '--prot', '1']);
  assert.equal(up.code, 2);
  assert.match(up.stderr, /^switchboard up: unknown option --prot \(did you mean --port\?\)\n/);
  const audit = await runCli(['audit', 'verify', '--bd', 'x']);
  assert.equal(audit.code, 2);
  assert.match(audit.stderr, /^switchboard audit: unknown option --bd \(did you mean --db\?\)\n/);
  const far = await runCli(['up', '--zzzzzzzz']);
  assert.match(far.stderr, /^switchboard up: unknown option --zzzzzzzz\n/);
});
