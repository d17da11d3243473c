// A reload that replaces a backend while reads of its lists are in flight and queued: what the
// replaced backend answers afterwards never reaches the catalog, and the queued read reads the
// backend that replaced it.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { connect } from '../faults/helpers.js';
import { eventually } from '../support/poll.js';
import { configFor, startGateway } from '../support/start-switchboard.js';

const STEERED = fileURLToPath(new URL('../fixtures/steered-list-server.js', import.meta.url));
/** How long the replaced backend's list reads take. */
const SLOW_MS = 2_000;

async function steered(t: TestContext, tag: string) {
  const dir = await mkdtemp(join(tmpdir(), 'sb-list-race-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return { dir, server: { command: process.execPath, args: [STEERED, dir, tag], sandbox: { read: [dir] } } };
}

test("a reload during a backend's slow list reads leaves the new backend's list in the catalog", async (t) => {
  const v1 = await steered(t, 'v1');
  const v2 = await steered(t, 'v2');
  const config = (server: object) => ({ servers: { f: server }, shutdown: { drainMs: 20_000 } });
  const sb = await startGateway(t, config(v1.server));
  const client = await connect(t, sb);
  const names = async () => (await client.listTools()).tools.map((tool) => tool.name);
  await eventually('v1 is listed', async () => (await names()).includes('v1_tool'), 20_000);

  // A call in flight keeps v1 running through the reload; its lists now answer slowly. Two
  // announcements: one read in flight, one queued behind it.
  const held = client.callTool({ name: 'hold', arguments: {} });
  await writeFile(join(v1.dir, 'delay'), String(SLOW_MS));
  await client.callTool({ name: 'announce', arguments: {} });
  await client.callTool({ name: 'announce', arguments: {} });
  const reloading = sb.reload(configFor(config(v2.server)));
  await eventually('v2 is listed', async () => (await names()).includes('v2_tool'), 20_000);

  // Long enough for both of v1's slow reads to have been answered.
  await new Promise((resolve) => setTimeout(resolve, 2 * SLOW_MS + 1_000));
  const listed = await names();
  assert.ok(listed.includes('v2_tool') && !listed.includes('v1_tool'), `listed: ${listed.join(', ')}`);
  await writeFile(join(v1.dir, 'release'), '');
  await held;
  await reloading;
});
