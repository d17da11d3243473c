// A stdio MCP backend serving one gathered server's real tool definitions from the catalog
// fixture (bench/fixtures/catalog/real-tools.json, or a file of the same shape holding only that
// server): `--file F --server NAME`. A call answers with its own name, which is all the
// catalog-modes benchmark needs of it. It declares tools.listChanged, as servers built on the MCP
// SDKs do: switchboard then serves its list from the catalog instead of reading it again from
// every backend each catalog.refreshIntervalMs.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createInterface } from 'node:readline';

const { values } = parseArgs({ options: { file: { type: 'string' }, server: { type: 'string' } } });
const data = JSON.parse(readFileSync(values.file!, 'utf8')) as {
  servers: { server: string; tools: Record<string, unknown>[] }[];
};
const tools = data.servers.find((s) => s.server === values.server)?.tools ?? [];

const send = (m: object) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\n');
createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line) as { id?: number | string; method?: string; params?: Record<string, unknown> };
  if (m.id === undefined) return;
  switch (m.method) {
    case 'initialize':
      return send({
        id: m.id,
        result: {
          protocolVersion: (m.params?.protocolVersion as string) ?? '2025-11-25',
          capabilities: { tools: { listChanged: true } },
          serverInfo: { name: `fixture-${values.server}`, version: '1.0.0' },
        },
      });
    case 'tools/list':
      return send({ id: m.id, result: { tools } });
    case 'tools/call':
      return send({
        id: m.id,
        result: { content: [{ type: 'text', text: `called ${String(m.params?.name)}` }] },
      });
    case 'ping':
      return send({ id: m.id, result: {} });
    default:
      return send({ id: m.id, error: { code: -32601, message: `Method not found: ${m.method}` } });
  }
});
