// Following a JetStream KV bucket goes on past a value the follower cannot take: it is reported
// and skipped, and the writes after it still arrive (a throw out of the consumer's callback would
// have ended the following, and a node would no longer see what others write).
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Kvm } from '@nats-io/kv';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { followBucket } from '../../src/mesh/state/follow-bucket.js';
import { NO_NATS, startNats, type Nats } from '../support/nats.js';
import { until } from '../support/poll.js';

describe('following a bucket', { skip: NO_NATS, timeout: 60_000 }, () => {
  let nats: Nats;
  let nc: NatsConnection;
  before(async () => {
    nats = await startNats({ jetStream: mkdtempSync(join(tmpdir(), 'sb-js-follow-')) });
    nc = await connect({ servers: nats.url });
  });
  after(async () => {
    await nc.close();
    await nats.stop();
  });

  it('reports a value it cannot take and goes on with the next writes', async () => {
    const kv = await new Kvm(nc).create('follow_test', { history: 1 });
    await kv.put('x.bad', 'not json');
    await kv.put('x.good', JSON.stringify({ n: 1 }));
    const taken: string[] = [];
    const skipped: string[] = [];
    const follow = await followBucket(
      kv,
      'x.>',
      (e) => {
        JSON.parse(Buffer.from(e.data).toString('utf8'));
        taken.push(e.key);
      },
      (_err, key) => skipped.push(key),
    );
    await follow.ready;
    await kv.put('x.later', JSON.stringify({ n: 2 }));
    await until(() => taken.includes('x.later') || undefined, 'the write after the bad value');
    follow.stop();
    assert.deepEqual(taken, ['x.good', 'x.later']);
    assert.deepEqual(skipped, ['x.bad']);
  });
});
