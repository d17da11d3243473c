// Example backend "vault": offers hosts signature checks and the public key, served by switchboard's vault handlers over the bridge.
import { McpServer } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';
// Outside this repository the same module is `mcp-switchboard/bridge`.
import { sharedBridge } from '../../src/public/bridge-client/index.js';

// One bridge connection for the life of the process, opened on first use: many calls share it.
const bridgeClient = sharedBridge();

const server = new McpServer({ name: 'vault', version: '1.0.0' });

server.registerTool(
  'verify_signature',
  {
    description: 'Checks a base64 signature over UTF-8 data with a vault key (the key stays in switchboard).',
    inputSchema: z.object({
      data: z.string(),
      signature: z.string().describe('Base64, as search_and_store returned it.'),
      key: z.string().default('records'),
    }),
    annotations: { readOnlyHint: true },
  },
  async ({ data, signature, key }, ctx) => {
    const client = await bridgeClient();
    const { valid } = await client.call<{ valid: boolean }>(
      'vault.verify',
      { key, data, signature },
      { parent: ctx.mcpReq._meta, signal: ctx.mcpReq.signal },
    );
    return { content: [{ type: 'text', text: JSON.stringify({ valid, key }) }] };
  },
);

server.registerTool(
  'public_key',
  {
    description: 'The PEM public key of an asymmetric vault key, for checking signatures elsewhere.',
    inputSchema: z.object({ key: z.string().default('records') }),
    annotations: { readOnlyHint: true },
  },
  async ({ key }, ctx) => {
    const client = await bridgeClient();
    const { publicKey, algorithm } = await client.call<{ publicKey: string; algorithm: string }>(
      'vault.publicKey',
      { key },
      { parent: ctx.mcpReq._meta, signal: ctx.mcpReq.signal },
    );
    return { content: [{ type: 'text', text: JSON.stringify({ key, algorithm, publicKey }) }] };
  },
);

// Signing for hosts, off unless VAULT_SIGN_FOR_HOSTS=1 and the operator adds vault.sign to this
// server's bridge.allow: it hands the signing key's power to whatever model drives the host (it can
// sign anything). It exists to show the three-call way of doing what search_store_sign does in one.
if (process.env.VAULT_SIGN_FOR_HOSTS === '1') {
  server.registerTool(
    'sign',
    {
      description:
        'Signs UTF-8 data with a vault key and returns the base64 signature (the key stays in switchboard).',
      inputSchema: z.object({ data: z.string(), key: z.string().default('records') }),
    },
    async ({ data, key }, ctx) => {
      const client = await bridgeClient();
      const signed = await client.call<{ signature: string; algorithm: string }>(
        'vault.sign',
        { key, data },
        { parent: ctx.mcpReq._meta, signal: ctx.mcpReq.signal },
      );
      return { content: [{ type: 'text', text: JSON.stringify({ key, ...signed }) }] };
    },
  );
}

await server.connect(new StdioServerTransport());
