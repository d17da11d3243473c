// `switchboard doctor` on a mesh node: this node's key (Ed25519, owner-only), the keys it trusts
// (its own entry in a shared list must be its key), and a real nats-server taking the node's
// connection, with JetStream when the mesh keeps its state there.
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { NO_NATS, nodeKeys, startNats, type Nats } from '../support/nats.js';
import { runCli } from './run-cli.js';

describe('doctor on a mesh node', { skip: NO_NATS, timeout: 60_000 }, () => {
  let dir: string;
  let plain: Nats;
  let js: Nats;
  const a = nodeKeys();
  const b = nodeKeys();

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sb-doctor-mesh-'));
    plain = await startNats();
    js = await startNats({ jetStream: join(dir, 'js') });
    await writeFile(join(dir, 'a.key'), a.privateKey, { mode: 0o600 });
    await writeFile(join(dir, 'a.pub'), a.publicKey);
    await writeFile(join(dir, 'b.pub'), b.publicKey);
  });
  after(async () => {
    await plain?.stop();
    await js?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  /** doctor's output for a config whose mesh section is `mesh` (YAML flow). */
  async function doctor(mesh: string) {
    const file = join(dir, `sb-${Math.random().toString(36).slice(2)}.yaml`);
    await writeFile(
      file,
      `http: { port: 0 }\nadmin: { port: 0 }\nsandbox: { mode: none }\nservers: {}\nmesh: ${mesh}\n`,
    );
    const env = { ...process.env, XDG_STATE_HOME: join(dir, 'state') };
    return runCli(['doctor', '--config', file], { env, cwd: dir });
  }

  it('passes a node whose keys are right and whose NATS server answers, JetStream included', async () => {
    const run = await doctor(
      `{ enabled: true, node: a, servers: ['${js.url}'], key: ${dir}/a.key, trust: { a: ${dir}/a.pub, b: ${dir}/b.pub }, state: jetstream }`,
    );
    assert.match(run.stdout, /^ok\s+mesh\.key\s+.*a\.key \(Ed25519, owner-only\)/m);
    assert.match(run.stdout, /^ok\s+mesh\.trust\.a\s/m);
    assert.match(run.stdout, /^ok\s+mesh\.trust\.b\s/m);
    assert.match(run.stdout, /^ok\s+mesh\.servers\s+.* answers \(nats-server [\d.]+\), JetStream on/m);
    assert.doesNotMatch(run.stdout, /^fail/m);
  });

  it('fails a key others can read, a trusted key that is not one, and its own entry with another key', async () => {
    await writeFile(join(dir, 'loose.key'), a.privateKey, { mode: 0o644 });
    await chmod(join(dir, 'loose.key'), 0o644);
    const run = await doctor(
      `{ enabled: true, node: a, servers: ['${plain.url}'], key: ${dir}/loose.key, trust: { b: ${dir}/a.key, c: ${dir}/nope.pub } }`,
    );
    assert.equal(run.code, 1);
    assert.match(run.stdout, /^fail\s+mesh\.key\s+.*loose\.key is 0644: others than its owner may read it/m);
    assert.match(run.stdout, /fix: chmod 0600 .*loose\.key/);
    assert.match(run.stdout, /^fail\s+mesh\.trust\.c\s+no such key file: .*nope\.pub/m);
    // A node's private key has no place in another node's config, though its public half could be used.
    assert.match(run.stdout, /^fail\s+mesh\.trust\.b\s+holds a private key/m);
    const mine = await doctor(
      `{ enabled: true, node: a, servers: ['${plain.url}'], key: ${dir}/a.key, trust: { a: ${dir}/b.pub } }`,
    );
    assert.match(
      mine.stdout,
      /^fail\s+mesh\.trust\.a\s+names this node \(a\) with a key that is not mesh\.key's/m,
    );
  });

  it('warns of a node without a key or trust, and fails JetStream state on a server without it', async () => {
    const run = await doctor(`{ enabled: true, node: a, servers: ['${plain.url}'], state: jetstream }`);
    assert.match(run.stdout, /^warn\s+mesh\.key\s+not set: this node neither calls nor serves/m);
    assert.match(run.stdout, /^warn\s+mesh\.trust\s+no node trusted/m);
    assert.match(run.stdout, /^fail\s+mesh\.servers\s+.* answers .*, but JetStream is not available/m);
    assert.match(run.stdout, /fix: run nats-server with JetStream/);
  });

  it('fails a NATS server that does not answer, naming it', async () => {
    const gone = await startNats();
    await gone.stop();
    const run = await doctor(
      `{ enabled: true, node: a, servers: ['${gone.url}'], key: ${dir}/a.key, trust: { b: ${dir}/b.pub } }`,
    );
    assert.equal(run.code, 1);
    assert.match(
      run.stdout,
      new RegExp(`^fail\\s+mesh\\.servers\\s+${gone.url.replace(/[./]/g, '\\$&')}: `, 'm'),
    );
    assert.match(run.stdout, /fix: start the NATS server/);
  });
});
