// Example host: one call to search_search_and_store through switchboard, then the checks a reader would make.
// Usage: node dist/examples/search-memory-vault/host.js [url] [query]
// It sends the token switchboard's front asks for by default: $SWITCHBOARD_TOKEN, else the local
// token switchboard keeps in its state directory.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const url = new URL(process.argv[2] ?? 'http://127.0.0.1:7450/mcp');
const query = process.argv[3] ?? 'bridge signature';
const stateDir = process.env.XDG_STATE_HOME || join(homedir(), '.local', 'state');
const token =
  process.env.SWITCHBOARD_TOKEN ?? readFileSync(join(stateDir, 'switchboard', 'http-token'), 'utf8').trim();

function textOf(result: { content?: unknown }): string {
  const first = (result.content as { type: string; text?: string }[] | undefined)?.[0];
  if (first?.type !== 'text' || first.text === undefined)
    throw new Error(`no text in ${JSON.stringify(result)}`);
  return first.text;
}

const host = new Client({ name: 'search-memory-vault-host', version: '1.0.0' });
await host.connect(
  new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
);
try {
  // The one call: search stores and signs over the bridge, without another model turn.
  const answer = JSON.parse(
    textOf(await host.callTool({ name: 'search_search_and_store', arguments: { query } })),
  ) as { entity: string; result: string; signature: string };
  console.log('search_and_store:', answer);

  const nodes = await host.callTool({ name: 'memory_open_nodes', arguments: { names: [answer.entity] } });
  console.log('in memory:', textOf(nodes));

  const check = await host.callTool({
    name: 'vault_verify_signature',
    arguments: { data: answer.result, signature: answer.signature },
  });
  console.log('signature check:', textOf(check));
} finally {
  await host.close();
}
