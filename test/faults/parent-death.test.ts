// No orphans even when switchboard itself is killed with SIGKILL: its watchdog ends every child's group.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { readMessages } from '../gateway/harness.js';
import { faulty, json, ppidOf, running } from './helpers.js';
import { eventually } from '../support/poll.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .filter((p) => ppidOf(p) === pid);
}

test('killing switchboard with SIGKILL leaves none of its children or theirs behind', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'sb-sigkill-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const config = join(dir, 'switchboard.json');
  await writeFile(
    config,
    JSON.stringify({ servers: { f: faulty(['--leak']), g: faulty(['--leak']) }, log: { level: 'silent' } }),
  );
  const sb = spawn(process.execPath, [MAIN, 'up', '--stdio', '--config', config], {
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  t.after(() => void sb.kill('SIGKILL'));
  const inbox = readMessages(sb.stdout);
  const send = (m: object) => sb.stdin.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\n');
  send({
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  await inbox.next((m) => m.id === 0);
  send({ method: 'notifications/initialized' });
  const pids: number[] = [];
  for (const [i, tool] of ['f_pids', 'g_pids'].entries()) {
    send({ id: i + 1, method: 'tools/call', params: { name: tool, arguments: {} } });
    const answer = await inbox.next((m) => m.id === i + 1);
    const { pid, leaked } = json(answer.result) as Record<string, number>;
    pids.push(pid!, leaked!);
  }
  // The two backends and the watchdog.
  const children = childrenOf(sb.pid!);
  assert.equal(children.length, 3, `children of switchboard: ${children.join(', ')}`);
  const all = [...new Set([...pids, ...children])];
  assert.ok(all.every(running));

  sb.kill('SIGKILL');
  await eventually('every child and grandchild to be gone', () => all.every((p) => !running(p)));
});
