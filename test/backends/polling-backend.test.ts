// A legacy HTTP backend that closes a call's stream after a priming event and a `retry` (SSE
// polling): switchboard comes back with Last-Event-ID as told and delivers the answer, the host has
// its response headers at once, and a backend that then refuses the resume fails the call at once
// instead of leaving it to the call timeout.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { servePolling } from '../fixtures/polling-http-server.js';
import { rawOpen, rawSession, responseTo, textOf } from '../gateway/harness.js';
import { connectHttp } from '../support/mcp-clients.js';
import { httpUrl, startGateway } from '../support/start-switchboard.js';

const servers = (url: string) => ({ polling: { url, era: 'legacy' as const, allowPrivateNetwork: true } });

test(
  'a call to a backend that closes its stream for polling completes after switchboard comes back',
  { timeout: 60_000 },
  async (t) => {
    const remote = await servePolling({ retryMs: 20 });
    t.after(() => remote.close());
    const sb = await startGateway(t, { servers: servers(remote.url), audit: { enabled: false } });
    const { client } = await connectHttp(t, httpUrl(sb));
    const result = await client.callTool({ name: 'slow', arguments: {} });
    assert.equal(remote.resumes.length, 1, 'switchboard came back once, with the priming event id');
    assert.equal(textOf(result), `answered after ${remote.resumes[0]}`);

    // A raw host sees its headers before the answer exists, then the answer on the same stream.
    const session = await rawSession(httpUrl(sb));
    const call = JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'slow', arguments: {} },
    });
    const stream = await rawOpen(httpUrl(sb), call, { 'mcp-session-id': session });
    assert.equal(stream.status, 200);
    assert.match(stream.headers.get('content-type') ?? '', /text\/event-stream/);
    await stream.ended;
    assert.match(textOf(responseTo(stream.inbox.items, 7).result), /^answered after /);
  },
);

test(
  'a backend that closes its stream and then refuses the resume fails the call at once',
  { timeout: 60_000 },
  async (t) => {
    const remote = await servePolling({ retryMs: 20, refuseResume: true });
    t.after(() => remote.close());
    const sb = await startGateway(t, { servers: servers(remote.url), audit: { enabled: false } });
    const { client } = await connectHttp(t, httpUrl(sb));
    await assert.rejects(
      client.callTool({ name: 'slow', arguments: {} }),
      /ended its response stream without an answer/,
    );
  },
);
