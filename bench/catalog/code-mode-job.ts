// The code-mode part of `npm run bench -- catalog-modes`: one multi-step job (read five records,
// keep the open ones, write a summary) done by a host through direct tool calls and through one
// run_script, over the real switchboard and the records fixture server. Prints the tool calls the
// host makes and the HTTP bytes crossing the host's connection (request bodies and responses).
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Config } from '../../src/config/schema.js';
import { createLogger } from '../../src/log.js';
import { startSwitchboard } from '../../src/switchboard.js';

const RECORDS = fileURLToPath(new URL('../../test/fixtures/records-server.js', import.meta.url));

/** The job as a host model would write it for run_script. */
export const JOB_SCRIPT = `
const open = [];
for (let id = 1; id <= 5; id++) {
  const r = await tools.records_get_record({ id });
  if (r.status === 'open') open.push(r.customer + ' (' + r.amount + ')');
}
await tools.records_write_summary({ text: 'Open records: ' + open.join(', ') });
return { open: open.length };`;

interface Counted {
  calls: number;
  bytes: number;
}

export async function codeModeJob(): Promise<string[]> {
  const config = Config.parse({
    servers: { records: { command: process.execPath, args: [RECORDS] } },
    namespacing: { mode: 'always' },
    catalog: { codeMode: { enabled: true } },
    http: { port: 0 },
  });
  const sb = await startSwitchboard({ config, http: true, log: createLogger('silent') });
  try {
    let bytes = 0;
    // Counts what crosses the host's connection: POST bodies out, whole responses back.
    const counting: typeof fetch = async (input, init) => {
      if (init?.method !== 'POST') return fetch(input, init);
      if (typeof init.body === 'string') bytes += Buffer.byteLength(init.body);
      const res = await fetch(input, init);
      const body = Buffer.from(await res.arrayBuffer());
      bytes += body.length;
      return new Response(res.status === 202 || res.status === 204 ? null : body, {
        status: res.status,
        statusText: res.statusText,
        headers: res.headers,
      });
    };
    const client = new Client({ name: 'code-mode-bench', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(sb.http!.url), { fetch: counting }));
    await client.listTools();
    const measure = async (job: () => Promise<number>): Promise<Counted> => {
      bytes = 0;
      const calls = await job();
      return { calls, bytes };
    };
    const direct = await measure(async () => {
      const open: string[] = [];
      for (let id = 1; id <= 5; id++) {
        const r = await client.callTool({ name: 'records_get_record', arguments: { id } });
        const rec = r.structuredContent as { status: string; customer: string; amount: number };
        if (rec.status === 'open') open.push(`${rec.customer} (${rec.amount})`);
      }
      await client.callTool({
        name: 'records_write_summary',
        arguments: { text: `Open records: ${open.join(', ')}` },
      });
      return 6;
    });
    const code = await measure(async () => {
      const r = await client.callTool({ name: 'run_script', arguments: { script: JOB_SCRIPT } });
      if (r.isError) throw new Error(`the job script failed: ${JSON.stringify(r.content)}`);
      return 1;
    });
    await client.close();
    return [
      'code mode vs direct calls, one job (read 5 records, keep the open ones, write a summary):',
      `  direct calls  tool calls by the host ${direct.calls}   bytes over the host connection ${direct.bytes}`,
      `  run_script    tool calls by the host ${code.calls}   bytes over the host connection ${code.bytes}  (${(direct.bytes / code.bytes).toFixed(1)}x fewer bytes)`,
    ];
  } finally {
    await sb.stop();
  }
}
