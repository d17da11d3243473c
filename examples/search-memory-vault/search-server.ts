// Example backend "search": finds passages in a built-in corpus (search), or finds, stores in memory and has signed over the bridge in one call (search_and_store).
import { McpServer } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';
// Outside this repository the same module is `mcp-switchboard/bridge`.
import { sharedBridge } from '../../src/public/bridge-client/index.js';

/** Small on purpose: the point is what happens to a result, not how it is found. */
const CORPUS = [
  {
    id: 'mcp',
    title: 'Model Context Protocol',
    text: 'MCP lets a host connect to servers that offer tools, resources and prompts.',
  },
  {
    id: 'bridge',
    title: 'The switchboard bridge',
    text: 'Backends call each other and switchboard handlers over one authenticated Unix socket.',
  },
  {
    id: 'vault',
    title: 'The vault extension',
    text: 'Keys live inside switchboard; a backend asks for a signature and never sees the key.',
  },
  {
    id: 'loops',
    title: 'The loop guard',
    text: 'Every bridge call carries its call chain, so cycles and runaway depth are refused.',
  },
] as const;

function search(query: string) {
  const words = query.toLowerCase().split(/\W+/).filter(Boolean);
  const scored = CORPUS.map((doc) => {
    const hay = `${doc.title} ${doc.text}`.toLowerCase();
    return { doc, score: words.filter((w) => hay.includes(w)).length };
  });
  return scored
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score)
    .map((s) => ({ id: s.doc.id, title: s.doc.title, text: s.doc.text, score: s.score }));
}

// One bridge connection for the life of the process, opened on first use: many calls share it.
const bridgeClient = sharedBridge();

const server = new McpServer({ name: 'search', version: '1.0.0' });

// The plain search: what the search_store_sign workflow's first step calls. Its text is the
// record the workflow stores and signs, the same bytes search_and_store stores and signs.
server.registerTool(
  'search',
  {
    description:
      'Searches the built-in corpus; the answer is JSON text: {query, hits: [{id, title, text, score}]}.',
    inputSchema: z.object({ query: z.string().min(1).describe('Words to look for.') }),
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  ({ query }) => ({ content: [{ type: 'text', text: JSON.stringify({ query, hits: search(query) }) }] }),
);

server.registerTool(
  'search_and_store',
  {
    description:
      'Searches the built-in corpus, stores the result in memory as an entity, and returns it with a vault signature over it.',
    inputSchema: z.object({
      query: z.string().min(1).describe('Words to look for.'),
      key: z.string().default('records').describe('Vault key to sign with.'),
    }),
  },
  async ({ query, key }, ctx) => {
    const client = await bridgeClient();
    // Passing the request's _meta as parent carries the call chain: switchboard can then refuse
    // a loop and cancel these calls when the host cancels this one.
    const options = { parent: ctx.mcpReq._meta, signal: ctx.mcpReq.signal };
    // The signed bytes are exactly the stored observation, so anyone can check one against the other.
    const result = JSON.stringify({ query, hits: search(query) });
    const entity = `search: ${query}`;
    const stored = await client.callTool(
      'memory_create_entities',
      { entities: [{ name: entity, entityType: 'search_result', observations: [result] }] },
      options,
    );
    if (stored.isError) return { content: stored.content, isError: true };
    const signed = await client.call<{ signature: string; algorithm: string }>(
      'vault.sign',
      { key, data: result },
      options,
    );
    const answer = { entity, result, signature: signed.signature, algorithm: signed.algorithm, key };
    return { content: [{ type: 'text', text: JSON.stringify(answer) }] };
  },
);

await server.connect(new StdioServerTransport());
