// Outbound connections read into one reused buffer: node:http's parser copies an answer's body out
// of each read, so with reads of their own an answer's bytes would be held twice outside V8's heap
// (the copy and the garbage read) until a collection. Bodies arrive intact when several
// connections read at once, and on kept-alive connections used again.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { backendDestination, outboundFetch } from '../../src/net/outbound.js';

const MIB = 1024 * 1024;
const BODY_BYTES = 8 * MIB;
const PIECE = 64 * 1024;

let server: Server;
let url: URL;

before(async () => {
  // Every answer is BODY_BYTES, written as one reused piece (so the server, in this process too,
  // adds nothing outside the heap), each piece stamped with the path's letter and its index.
  server = createServer(async (req, res) => {
    const letter = (req.url ?? '/a').charCodeAt(1);
    const piece = Buffer.alloc(PIECE, letter);
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    for (let i = 0; i < BODY_BYTES / PIECE; i++) {
      piece.writeUInt32BE(i, 0);
      if (!res.write(piece)) await once(res, 'drain');
    }
    res.end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
});

after(() => server.close());

const client = () =>
  outboundFetch({ destination: backendDestination('reads'), url, allowPrivateNetwork: true });

/** The whole body, as the chunks it came in. */
async function readAll(res: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of res as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

function assertBody(body: Buffer, letter: string): void {
  assert.equal(body.length, BODY_BYTES);
  for (let i = 0; i < BODY_BYTES / PIECE; i++) {
    assert.equal(body.readUInt32BE(i * PIECE), i, `piece ${i} in its place`);
    assert.equal(body[i * PIECE + PIECE - 1], letter.charCodeAt(0), `piece ${i} of answer ${letter}`);
  }
}

test("a connection's reads all land in one buffer, not one each", async () => {
  const fetch = client();
  try {
    const res = await fetch.request(new URL('/a', url));
    // What the socket hands node:http's parser: with a buffer per read, an 8 MiB answer would be
    // 8 MiB of reads (garbage once parsed, yet held until a collection) besides the body's copy.
    const reads = new Set<ArrayBufferLike>();
    let bytes = 0;
    res.socket.on('data', (chunk: Buffer) => {
      reads.add(chunk.buffer);
      bytes += chunk.length;
    });
    assertBody(await readAll(res), 'a');
    assert.ok(bytes > BODY_BYTES / 2, `the reads were seen (${bytes} bytes)`);
    assert.equal(reads.size, 1, `${reads.size} buffers read into for ${bytes} bytes`);
  } finally {
    fetch.close();
  }
});

test('answers read at once on several connections, then again on the same ones, arrive intact', async () => {
  const fetch = client();
  try {
    for (let round = 0; round < 2; round++) {
      const letters = ['b', 'c', 'd'];
      const answers = await Promise.all(letters.map((l) => fetch.request(new URL(`/${l}`, url))));
      const bodies = await Promise.all(answers.map(readAll));
      bodies.forEach((body, i) => assertBody(body, letters[i]!));
    }
  } finally {
    fetch.close();
  }
});
