// Records the real definitions of popular MCP servers from npm, the benign half of the scanner
// corpus: `node dist/bench/scan/collect-benign.js <install-root> <out.json> <package>…`. Each package
// must already be installed under <install-root>/srv-<package with / and @ as _> (npm install
// --prefix); this script only starts it over stdio with placeholder credentials and asks for its
// tools and prompts. It needs the network only for what the servers themselves do at start.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

/** Placeholder credentials: enough for servers that refuse to start without a token to list their tools. */
const DUMMY_ENV: Record<string, string> = {
  GITHUB_PERSONAL_ACCESS_TOKEN: 'ghp_placeholder',
  GITLAB_PERSONAL_ACCESS_TOKEN: 'glpat-placeholder',
  GITLAB_API_URL: 'https://gitlab.invalid/api/v4',
  SLACK_BOT_TOKEN: 'xoxb-placeholder',
  SLACK_TEAM_ID: 'T000000',
  BRAVE_API_KEY: 'placeholder',
  GOOGLE_MAPS_API_KEY: 'placeholder',
  FIRECRAWL_API_KEY: 'fc-placeholder',
  TAVILY_API_KEY: 'tvly-placeholder',
  EXA_API_KEY: 'placeholder',
  PERPLEXITY_API_KEY: 'pplx-placeholder',
  STRIPE_SECRET_KEY: 'sk_test_placeholder',
  SUPABASE_ACCESS_TOKEN: 'sbp_placeholder',
  SENTRY_ACCESS_TOKEN: 'placeholder',
  NOTION_TOKEN: 'ntn_placeholder',
  OPENAPI_MCP_HEADERS: '{}',
  HEROKU_API_KEY: 'placeholder',
  CIRCLECI_TOKEN: 'placeholder',
  FIGMA_API_KEY: 'placeholder',
  PRIVATE_APP_ACCESS_TOKEN: 'placeholder',
  NEON_API_KEY: 'placeholder',
  MYSQL_HOST: '127.0.0.1',
  MYSQL_USER: 'placeholder',
  MYSQL_PASS: 'placeholder',
  MYSQL_DB: 'placeholder',
  AWS_ACCESS_KEY_ID: 'placeholder',
  AWS_SECRET_ACCESS_KEY: 'placeholder',
  AWS_REGION: 'us-east-1',
  EVERART_API_KEY: 'placeholder',
  MDB_MCP_CONNECTION_STRING: 'mongodb://127.0.0.1:1/placeholder',
};

/** Arguments some servers require on the command line. */
const ARGS: Record<string, string[]> = {
  '@modelcontextprotocol/server-filesystem': ['/tmp'],
  '@modelcontextprotocol/server-postgres': ['postgresql://127.0.0.1:1/placeholder'],
  '@modelcontextprotocol/server-redis': ['redis://127.0.0.1:1'],
  '@stripe/mcp': ['--tools=all', '--api-key=sk_test_placeholder'],
  '@supabase/mcp-server-supabase': ['--access-token=sbp_placeholder'],
  'figma-developer-mcp': ['--stdio', '--figma-api-key=placeholder'],
  '@sentry/mcp-server': ['--access-token=placeholder'],
};

function binOf(dir: string, pkg: string): string {
  const manifest = JSON.parse(readFileSync(join(dir, 'node_modules', pkg, 'package.json'), 'utf8')) as {
    bin?: string | Record<string, string>;
  };
  const bin = typeof manifest.bin === 'string' ? manifest.bin : Object.values(manifest.bin ?? {})[0];
  if (bin === undefined) throw new Error(`${pkg} has no bin`);
  return join(dir, 'node_modules', pkg, bin);
}

async function listDefinitions(root: string, pkg: string): Promise<Record<string, unknown>> {
  const dir = join(root, `srv-${pkg.replace(/[/@]/g, '_')}`);
  if (!existsSync(dir)) throw new Error('not installed');
  const child = spawn(process.execPath, [binOf(dir, pkg), ...(ARGS[pkg] ?? [])], {
    env: { ...process.env, ...DUMMY_ENV },
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  const pending = new Map<number, (msg: Record<string, unknown>) => void>();
  createInterface({ input: child.stdout }).on('line', (line) => {
    try {
      const msg = JSON.parse(line) as Record<string, unknown>;
      pending.get(msg.id as number)?.(msg);
    } catch {
      // Servers that log to stdout: not JSON-RPC, not ours.
    }
  });
  let next = 1;
  const ask = (method: string, params: object = {}) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => reject(new Error(`${method} timed out`)), 20_000);
      pending.set(id, (msg) => {
        clearTimeout(timer);
        resolve(msg);
      });
      child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
    });
  try {
    const init = await ask('initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'scanner-corpus', version: '1' },
    });
    child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
    const caps = ((init.result as Record<string, unknown>)?.capabilities ?? {}) as Record<string, unknown>;
    const tools = ((await ask('tools/list')).result as { tools?: unknown[] })?.tools ?? [];
    const prompts = caps.prompts
      ? (((await ask('prompts/list')).result as { prompts?: unknown[] })?.prompts ?? [])
      : [];
    const version = JSON.parse(readFileSync(join(dir, 'node_modules', pkg, 'package.json'), 'utf8')).version;
    return { package: pkg, version, tools, prompts };
  } finally {
    child.kill();
  }
}

async function main(): Promise<void> {
  const [root, out, ...packages] = process.argv.slice(2);
  if (!root || !out || packages.length === 0) {
    process.stderr.write('usage: collect-benign <install-root> <out.json> <package>…\n');
    process.exitCode = 2;
    return;
  }
  const servers: Record<string, unknown>[] = existsSync(out)
    ? (JSON.parse(readFileSync(out, 'utf8')) as { servers: Record<string, unknown>[] }).servers
    : [];
  for (const pkg of packages) {
    try {
      const found = await listDefinitions(root, pkg);
      const at = servers.findIndex((s) => s.package === pkg);
      if (at >= 0) servers[at] = found;
      else servers.push(found);
      process.stderr.write(`${pkg}: ${(found.tools as unknown[]).length} tools\n`);
    } catch (error) {
      process.stderr.write(`${pkg}: skipped (${error instanceof Error ? error.message : String(error)})\n`);
    }
  }
  writeFileSync(out, JSON.stringify({ servers }, null, 1) + '\n');
}

await main();
