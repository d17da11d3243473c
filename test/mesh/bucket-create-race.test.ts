// Nodes that start together on a fresh NATS server all open the mesh's buckets at once: each must
// get the bucket, whoever's add reached the server first (a loser's add used to fail the store
// with "subjects overlap with an existing stream").
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MeshSection } from '../../src/config/mesh-schema.js';
import { createBucket, MeshState } from '../../src/mesh/state/mesh-state.js';
import type { Kvm } from '@nats-io/kv';
import { silentLogger } from '../../src/log.js';
import { NO_NATS, startNats, type Nats } from '../support/nats.js';

// The server's race is narrow (its stream-name check and its subject-overlap check are apart) and
// shows only under load, so the loser's answer is also played to createBucket directly.
describe('createBucket', () => {
  const kvmAnswering = (...answers: (Error | 'ok')[]) => {
    const asked: string[] = [];
    const kvm = {
      create: (name: string) => {
        asked.push(name);
        const answer = answers.shift();
        return answer === 'ok' ? Promise.resolve({ bucket: name }) : Promise.reject(answer);
      },
    };
    return { kvm: kvm as unknown as Kvm, asked };
  };

  it("opens the bucket another node's add just made", async () => {
    for (const lost of ['subjects overlap with an existing stream', 'stream name already in use']) {
      const { kvm, asked } = kvmAnswering(new Error(lost), 'ok');
      assert.deepEqual(await createBucket(kvm, 'm_runs', {}), { bucket: 'm_runs' });
      assert.deepEqual(asked, ['m_runs', 'm_runs']);
    }
  });

  it('gives any other refusal as it came, without a second add', async () => {
    const { kvm, asked } = kvmAnswering(new Error('jetstream not enabled'), 'ok');
    await assert.rejects(createBucket(kvm, 'm_runs', {}), /jetstream not enabled/);
    assert.deepEqual(asked, ['m_runs']);
  });
});

describe('mesh buckets opened by several nodes at once', { skip: NO_NATS, timeout: 60_000 }, () => {
  let nats: Nats;
  before(async () => {
    nats = await startNats({ jetStream: mkdtempSync(join(tmpdir(), 'sb-js-race-')) });
  });
  after(async () => {
    await nats.stop();
  });

  it('gives every node the bucket, on every fresh bucket', async () => {
    const states = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map(
      (node) =>
        new MeshState(
          MeshSection.parse({ enabled: true, servers: [nats.url], node, name: 'race', state: 'jetstream' }),
          silentLogger,
        ),
    );
    try {
      await Promise.all(states.map((s) => s.connection()));
      for (let i = 0; i < 40; i++) {
        const opened = await Promise.allSettled(states.map((s) => s.bucket(`b${i}`)));
        const refused = opened.filter((o) => o.status === 'rejected').map((o) => String(o.reason));
        assert.deepEqual(refused, [], `bucket b${i}`);
        // Every node holds the one bucket: a write on one is read on another.
        const [first, last] = [opened[0], opened[7]] as PromiseFulfilledResult<
          Awaited<ReturnType<MeshState['bucket']>>
        >[];
        await first!.value.put('k', `v${i}`);
        assert.equal((await last!.value.get('k'))?.string(), `v${i}`);
      }
    } finally {
      await Promise.all(states.map((s) => s.close()));
    }
  });
});
