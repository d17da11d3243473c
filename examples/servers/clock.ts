// Bundled example server "clock": the time in any IANA time zone, and a countdown that reports
// progress, so the out-of-the-box setup shows progress notifications passing through switchboard.
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';

function createServer(): McpServer {
  const server = new McpServer({ name: 'clock', version: '1.0.0' });
  server.registerTool(
    'now',
    {
      description: 'The current date and time, in a time zone (IANA name, default UTC).',
      inputSchema: z.object({ timeZone: z.string().default('UTC') }),
      annotations: { readOnlyHint: true },
    },
    async ({ timeZone }) => {
      try {
        const text = new Intl.DateTimeFormat('en-GB', {
          dateStyle: 'full',
          timeStyle: 'long',
          timeZone,
        }).format(new Date());
        return { content: [{ type: 'text', text }] };
      } catch {
        return { isError: true, content: [{ type: 'text', text: `Unknown time zone: ${timeZone}` }] };
      }
    },
  );
  server.registerTool(
    'countdown',
    {
      description: 'Count down from n seconds, reporting progress each second.',
      inputSchema: z.object({ seconds: z.number().int().min(1).max(60) }),
    },
    async ({ seconds }, ctx) => {
      const progressToken = ctx.mcpReq._meta?.progressToken;
      for (let i = 1; i <= seconds; i++) {
        await new Promise((r) => setTimeout(r, 1000));
        if (ctx.mcpReq.signal.aborted) break;
        if (progressToken !== undefined) {
          await ctx.mcpReq.notify({
            method: 'notifications/progress',
            params: { progressToken, progress: i, total: seconds },
          });
        }
      }
      return { content: [{ type: 'text', text: `Counted down ${seconds} seconds.` }] };
    },
  );
  return server;
}

serveStdio(createServer);
