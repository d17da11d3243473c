// logging/setLevel per session: each host gets the log lines its own level admits, over HTTP and stdio.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Client } from '@modelcontextprotocol/client';
import { probe } from './harness.js';
import { connectHttp, connectStdio } from '../support/mcp-clients.js';
import { httpUrl } from '../support/start-switchboard.js';

interface Line {
  level: string;
  data: { server: string; message: string };
}

function collect(client: Client): Line[] {
  const lines: Line[] = [];
  client.setNotificationHandler('notifications/message', (n) => {
    lines.push({ level: n.params.level, data: n.params.data as Line['data'] });
  });
  return lines;
}

async function log(client: Client, tool: string, level: string, message: string): Promise<void> {
  await client.callTool({ name: tool, arguments: { level, message } });
}

test('each session gets only the log lines its own level admits', async (t) => {
  let stdioLines: Line[] = [];
  const { sb, client: stdio } = await connectStdio(
    t,
    { servers: { a: probe('a'), b: probe('b') } },
    { setup: (c) => (stdioLines = collect(c)) },
  );
  let httpLines: Line[] = [];
  const { client: http } = await connectHttp(t, httpUrl(sb), { setup: (c) => (httpLines = collect(c)) });

  await http.setLoggingLevel('error');
  await stdio.setLoggingLevel('debug');

  // A log line is sent before the result of the call that caused it, on the same stream, so once
  // the call has returned every line it will ever get has arrived.
  await log(http, 'a_log', 'info', 'http info');
  assert.deepEqual(httpLines, []);
  await log(http, 'a_log', 'error', 'http error');
  assert.deepEqual(httpLines, [{ level: 'error', data: { server: 'a', message: 'http error' } }]);

  await log(stdio, 'b_log', 'debug', 'stdio debug');
  await log(stdio, 'a_log', 'info', 'stdio info');
  assert.deepEqual(stdioLines, [
    { level: 'debug', data: { server: 'b', message: 'stdio debug' } },
    { level: 'info', data: { server: 'a', message: 'stdio info' } },
  ]);
  assert.equal(httpLines.length, 1, 'the http host never saw the stdio host’s lines');

  await stdio.setLoggingLevel('critical');
  await log(stdio, 'a_log', 'error', 'stdio error after raising the level');
  assert.equal(stdioLines.length, 2);
  await log(http, 'b_log', 'critical', 'http critical');
  assert.deepEqual(httpLines.at(-1), { level: 'critical', data: { server: 'b', message: 'http critical' } });
  assert.equal(stdioLines.length, 2, 'lines caused by another session’s call stay with that session');
});

test('a level that is not a log level is refused as invalid params', async (t) => {
  const { client } = await connectStdio(t, { servers: { a: probe('a') } });
  await assert.rejects(
    client.request({ method: 'logging/setLevel', params: { level: 'loud' } }),
    (err: { code?: number; message?: string }) =>
      err.code === -32602 && /level must be one of/.test(err.message ?? ''),
  );
});
