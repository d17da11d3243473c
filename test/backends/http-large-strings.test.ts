// Large strings cross an HTTP backend as they cross a stdio one, as bytes (http-answers.ts): however
// its answer is framed (a JSON body; SSE with LF, CRLF or CR line ends, its data cut over several
// lines, its bytes in uneven reads), the host gets exactly what the backend said, and the backend
// gets exactly the arguments the host sent.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { serveBulkEcho, type Framing } from '../fixtures/bulk-echo-http.js';
import { connectStdio } from '../support/mcp-clients.js';

/** Text of `chars` characters that JSON escapes in every way JSON.stringify does, and multi-byte ones. */
function awkward(chars: number): string {
  const unit = 'é"\\\n\t😀 ab<>&/\u2028 ';
  return unit.repeat(Math.ceil(chars / unit.length)).slice(0, chars);
}

const CASES: { what: string; args: Record<string, unknown>; result: (text: string) => unknown }[] = [
  {
    what: 'a text and structured content',
    args: { text: awkward(300_000) },
    result: (text) => ({
      content: [{ type: 'text', text }],
      structuredContent: { [text.slice(0, 64)]: text.slice(-4096) },
    }),
  },
  {
    what: 'a megabyte of plain text',
    args: { text: 'x'.repeat(1024 * 1024) },
    result: (text) => ({
      content: [{ type: 'text', text }],
      structuredContent: { [text.slice(0, 64)]: text.slice(-4096) },
    }),
  },
  {
    what: 'text spelt with \\u escapes',
    args: { text: awkward(40_000), spell: 'unicode' },
    result: (text) => ({ content: [{ type: 'text', text }] }),
  },
  {
    what: 'a blob',
    args: { text: awkward(200_000), as: 'blob' },
    result: (text) => ({
      content: [
        {
          type: 'resource',
          resource: {
            uri: 'bulk://echo',
            mimeType: 'application/octet-stream',
            blob: Buffer.from(text).toString('base64'),
          },
        },
      ],
    }),
  },
  {
    what: 'a large member name',
    args: { text: awkward(100_000), as: 'key' },
    result: (text) => ({ content: [{ type: 'text', text }], structuredContent: { [text]: text } }),
  },
];

for (const framing of ['json', 'sse', 'sse-crlf', 'sse-cr'] satisfies Framing[]) {
  test(`large strings cross an HTTP backend answering in ${framing} unchanged, both ways`, async (t) => {
    const backend = await serveBulkEcho(framing);
    t.after(() => backend.close());
    const { client } = await connectStdio(t, { servers: { bulk: { url: backend.url, era: 'legacy' } } });
    for (const { what, args, result } of CASES) {
      const sent = backend.bodies.length;
      const answer = await client.callTool({ name: 'echo', arguments: args }, { timeout: 120_000 });
      assert.deepEqual(answer, result(args.text as string), `${what}: the answer`);
      const calls = backend.bodies
        .slice(sent)
        .map(
          (body) =>
            JSON.parse(body.toString('utf8')) as { method?: string; params?: { arguments?: unknown } },
        )
        .filter((m) => m.method === 'tools/call');
      assert.equal(calls.length, 1, `${what}: one call reached the backend`);
      assert.deepEqual(calls[0]!.params!.arguments, args, `${what}: the arguments the backend got`);
    }
  });
}
