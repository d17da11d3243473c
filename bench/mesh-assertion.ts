// CPU per mesh caller assertion, each form in the same run: Ed25519 (EdDSA) against the pair-session
// MAC (HS256), sign on the entry node and verify on the target, in alternating slices so both see
// the same machine load. Run: `npm run build && node dist/bench/mesh-assertion.js [messages]`.
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { AssertionSigner, AssertionVerifier, routedMessage } from '../src/mesh/assertion.js';
import { PairSessions } from '../src/mesh/pair-sessions.js';

const N = Number(process.argv[2] ?? 20_000);
const SLICES = 10;
const HOST = { kind: 'host', id: 'stdio' } as const;
// A tools/call as the mesh routes it: about the size of the mesh bench's echo calls.
const MSG = routedMessage(
  'echo',
  'switchboard.inbox.a.3f0c1a52-8f1e-4a57-9d2b-0d6c1f3b7e11',
  JSON.stringify({
    jsonrpc: '2.0',
    id: 42,
    method: 'tools/call',
    params: { name: 'echo', arguments: { text: 'hello' }, _meta: { progressToken: 7 } },
  }),
);

const a = generateKeyPairSync('ed25519');
const b = generateKeyPairSync('ed25519');
const trusted = new Map<string, KeyObject>([
  ['a', a.publicKey],
  ['b', b.publicKey],
]);
const aKey = a.privateKey;
const bKey = b.privateKey;
const onA = new PairSessions('switchboard', 'a', aKey, trusted);
const onB = new PairSessions('switchboard', 'b', bKey, trusted);
for (let i = 0; i < 2; i++) {
  onB.heard('a', { kx: onA.binding, sessions: onA.acks() });
  onA.heard('b', { kx: onB.binding, sessions: onB.acks() });
}
const forms = {
  EdDSA: {
    signer: new AssertionSigner('a', aKey, 30),
    verifier: new AssertionVerifier('b', trusted),
  },
  HS256: {
    signer: new AssertionSigner('a', aKey, 30, onA),
    verifier: new AssertionVerifier('b', trusted, onB),
  },
};

const cpu = { EdDSA: { sign: 0, verify: 0 }, HS256: { sign: 0, verify: 0 } };
const per = Math.ceil(N / SLICES);
for (let slice = 0; slice < SLICES + 1; slice++) {
  for (const [name, form] of Object.entries(forms) as [keyof typeof forms, (typeof forms)['EdDSA']][]) {
    const jws: string[] = new Array<string>(per);
    let t = process.cpuUsage();
    for (let i = 0; i < per; i++) jws[i] = await form.signer.sign(HOST, 'call', 'b', MSG);
    const signed = process.cpuUsage(t);
    t = process.cpuUsage();
    for (let i = 0; i < per; i++)
      if (!(await form.verifier.verify('a', jws[i], MSG)).ok) throw new Error(name);
    const verified = process.cpuUsage(t);
    if (slice === 0) continue; // warm-up
    cpu[name].sign += signed.user + signed.system;
    cpu[name].verify += verified.user + verified.system;
  }
}
const us = (total: number) => (total / (per * SLICES)).toFixed(1);
process.stdout.write(`CPU per assertion, µs (${per * SLICES} messages each, alternating slices)\n`);
for (const [name, c] of Object.entries(cpu))
  process.stdout.write(`${name}\tsign ${us(c.sign)}\tverify ${us(c.verify)}\n`);
process.stdout.write(
  `HS256 ÷ EdDSA\tsign ${(cpu.HS256.sign / cpu.EdDSA.sign).toFixed(3)}\tverify ${(cpu.HS256.verify / cpu.EdDSA.verify).toFixed(3)}\n`,
);
