// The loop guard on a call another mesh node sent: the entry node's chain is taken as told, its
// backends named with their node and this node's own by their own names, and a chain longer than
// any allowed is refused having read only its end.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { muteReply } from '../../src/call/mute-reply.js';
import { newCall } from '../../src/call/new-call.js';
import type { CallContext } from '../../src/call/context.js';
import { CHAIN_META } from '../../src/protocol/chain-meta.js';
import { chainGuardStage, chainLinkStage } from '../../src/pipeline/stages/chain.js';
import { WireError } from '../../src/errors/errors.js';

const link = chainLinkStage({ maxDepth: 4, live: new Map(), inferParent: () => undefined, node: 'a' });
const guard = chainGuardStage(4);

/** A call from `backend:<id>@<from>` to this node's `target`, carrying `path` as its chain. */
function remoteCall(id: string, from: string, path: unknown[], target = 'local'): CallContext {
  const ctx = newCall({
    caller: { kind: 'backend', id: `${id}@${from}` },
    method: 'tools/call',
    params: { name: 'x', _meta: { [CHAIN_META]: { id: 'entry-node-call', path } } },
    reply: muteReply({ sessionKey: `mesh:${from}`, era: 'modern' }),
    mesh: { node: from },
  });
  ctx.target = { kind: 'tool', backend: target, name: 'x' };
  return ctx;
}

async function run(ctx: CallContext): Promise<WireError | undefined> {
  try {
    await link(ctx, () => guard(ctx, () => Promise.resolve()));
    return undefined;
  } catch (err) {
    return err as WireError;
  }
}

describe('the loop guard on a call from another node', () => {
  it("takes the entry node's chain, naming its backends with their node", async () => {
    // b's search called b's hop to a's local: b's record ends with its name for a's server.
    const ctx = remoteCall('hop', 'b', ['search', 'hop', 'local']);
    assert.equal(await run(ctx), undefined);
    assert.deepEqual(ctx.path, ['search@b', 'hop@b']);
  });

  it('refuses a chain that comes back to one of its own backends as a cycle', async () => {
    // a's local -> c's x (told to b as x@c) -> b's hop -> a's local again.
    const ctx = remoteCall('hop', 'b', ['local@a', 'x@c', 'hop', 'local']);
    const err = await run(ctx);
    assert.equal(err?.code, -32031);
    assert.match(err!.message, /local -> x@c -> hop@b -> local/);
  });

  it('refuses a chain past bridge.maxDepth across nodes', async () => {
    const err = await run(remoteCall('hop', 'b', ['p', 'q', 'r', 'hop', 'local'], 'other'));
    assert.equal(err?.code, -32032);
  });

  it('reads only the end of a chain longer than any allowed, and names how much it left', async () => {
    const path = Array.from({ length: 200_000 }, (_, i) => `s${i}`);
    const err = await run(remoteCall('hop', 'b', [...path, 'hop', 'local'], 'other'));
    assert.equal(err?.code, -32032);
    assert.ok(err!.message.length < 200, err!.message);
    assert.match(
      err!.message,
      /^Call chain too deep: \(199997 more\) -> s199997@b -> s199998@b -> s199999@b -> hop@b -> other/,
    );
  });

  it('refuses a malformed chain, and starts a fresh one for a call that carries none', async () => {
    const malformed = remoteCall('hop', 'b', []);
    malformed.params._meta![CHAIN_META] = { id: 7 };
    assert.equal((await run(malformed))?.code, -32033);
    const fresh = remoteCall('hop', 'b', []);
    delete fresh.params._meta![CHAIN_META];
    assert.equal(await run(fresh), undefined);
    assert.deepEqual(fresh.path, ['hop@b']);
  });

  it('keeps the local rule for a backend of its own: a chain it names must be a call under way here', async () => {
    const ctx = remoteCall('hop', 'b', ['hop', 'local']);
    const local = newCall({
      caller: { kind: 'backend', id: 'hop' },
      method: 'tools/call',
      params: ctx.params,
      reply: muteReply({ sessionKey: 'bridge:hop', era: 'modern' }),
    });
    assert.equal((await run(local))?.code, -32033);
  });
});
