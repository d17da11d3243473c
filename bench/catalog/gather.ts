// Gathers the real tool definitions of public MCP servers from npm for the catalog-modes
// benchmark: each package installed (by hand, outside the repository) under
// <dir>/pk/<package with / and @ as _>/node_modules is started over stdio with harmless dummy
// credentials, its tools/list recorded with its package@version, and the whole written to
// bench/fixtures/catalog/real-tools.json. Not run in CI: it needs the packages installed first:
//
//   mkdir -p /tmp/catalog-gather/pk/<name> && cd $_ && npm install --ignore-scripts <package>
//   node dist/bench/catalog/gather.js /tmp/catalog-gather
import { readFileSync, readdirSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

/** Dummy values for the variables servers check at start: enough to list tools, useless for calls. */
const DUMMY_ENV: Record<string, string> = Object.fromEntries(
  [
    'GITHUB_PERSONAL_ACCESS_TOKEN',
    'GITLAB_PERSONAL_ACCESS_TOKEN',
    'SLACK_BOT_TOKEN',
    'SLACK_TEAM_ID',
    'BRAVE_API_KEY',
    'GOOGLE_MAPS_API_KEY',
    'EVERART_API_KEY',
    'AWS_ACCESS_KEY_ID',
    'AWS_SECRET_ACCESS_KEY',
    'NOTION_TOKEN',
    'FIRECRAWL_API_KEY',
    'SUPABASE_ACCESS_TOKEN',
    'STRIPE_SECRET_KEY',
    'SENTRY_ACCESS_TOKEN',
    'HEROKU_API_KEY',
    'TAVILY_API_KEY',
    'EXA_API_KEY',
    'TWILIO_ACCOUNT_SID',
    'TWILIO_API_KEY',
    'TWILIO_API_SECRET',
    'DD_API_KEY',
    'DD_APP_KEY',
    'DATADOG_API_KEY',
    'DATADOG_APP_KEY',
    'BITBUCKET_USERNAME',
    'BITBUCKET_APP_PASSWORD',
    'LINEAR_API_KEY',
    'HEVY_API_KEY',
    'BROWSERSTACK_USERNAME',
    'BROWSERSTACK_ACCESS_KEY',
    'NEON_API_KEY',
    'CIRCLECI_TOKEN',
    'PRIVATE_APP_ACCESS_TOKEN',
    'CLOUDFLARE_API_TOKEN',
    'UPSTASH_EMAIL',
    'UPSTASH_API_KEY',
    'CHANNEL_ACCESS_TOKEN',
    'APIFY_TOKEN',
    'ES_API_KEY',
    'FIGMA_API_KEY',
    'BW_SESSION',
    'PINECONE_API_KEY',
    'MAPBOX_ACCESS_TOKEN',
    'DT_ENVIRONMENT',
    'GITHUB_TOKEN',
    'CLICKUP_API_KEY',
    'NETLIFY_PERSONAL_ACCESS_TOKEN',
    'WORDPRESS_API_KEY',
    'OCTOCODE_TOKEN',
    'RAILWAY_API_TOKEN',
    'AIRTABLE_API_KEY',
    'ASANA_ACCESS_TOKEN',
    'REPLICATE_API_TOKEN',
    'PERPLEXITY_API_KEY',
    'SHORTCUT_API_TOKEN',
    'LAUNCHDARKLY_API_KEY',
    'MONDAY_TOKEN',
    'API_TOKEN',
    'BRIGHTDATA_API_TOKEN',
    'AMAP_MAPS_API_KEY',
    'ATLASSIAN_API_TOKEN',
    'ATLASSIAN_USER_EMAIL',
    'CURRENTS_API_KEY',
    'FIGMA_ACCESS_TOKEN',
    'BACKLOG_API_KEY',
    'TODOIST_API_TOKEN',
    'TELNYX_API_KEY',
    'TRELLO_API_KEY',
    'TRELLO_TOKEN',
    'COOLIFY_ACCESS_TOKEN',
    'METABASE_API_KEY',
    'PLANE_API_KEY',
    'JIRA_API_TOKEN',
    'VERCEL_API_TOKEN',
    'CODACY_ACCOUNT_TOKEN',
    'HOSTINGER_API_TOKEN',
  ].map((k) => [k, 'dummy-0000000000000000']),
);
DUMMY_ENV.ES_URL = 'http://127.0.0.1:9';
DUMMY_ENV.MYSQL_HOST = '127.0.0.1';
DUMMY_ENV.WORDPRESS_URL = 'http://127.0.0.1:9';
DUMMY_ENV.DT_ENVIRONMENT = 'https://dummy.apps.dynatrace.com';
DUMMY_ENV.ATLASSIAN_SITE_NAME = 'dummy';
DUMMY_ENV.BACKLOG_DOMAIN = 'dummy.backlog.com';
DUMMY_ENV.ARGOCD_BASE_URL = 'http://127.0.0.1:9';
DUMMY_ENV.METABASE_URL = 'http://127.0.0.1:9';
DUMMY_ENV.COOLIFY_BASE_URL = 'http://127.0.0.1:9';
DUMMY_ENV.PLANE_WORKSPACE_SLUG = 'dummy';
DUMMY_ENV.AZURE_DEVOPS_ORG_URL = 'https://dev.azure.com/dummy';
DUMMY_ENV.AZURE_DEVOPS_AUTH_METHOD = 'pat';
DUMMY_ENV.AZURE_DEVOPS_PAT = 'dummy-0000000000000000';

/** Extra arguments some servers need before they list anything. */
const ARGS: Record<string, string[]> = {
  '@modelcontextprotocol/server-everything': ['stdio'],
  '@modelcontextprotocol/server-filesystem': ['/tmp'],
  '@modelcontextprotocol/server-postgres': ['postgresql://127.0.0.1:9/x'],
  '@modelcontextprotocol/server-aws-kb-retrieval': [],
  '@azure-devops/mcp': ['dummy-org'],
  '@supabase/mcp-server-supabase': ['--access-token', 'dummy'],
  '@stripe/mcp': ['--tools=all', '--api-key=sk_test_dummy'],
  '@heroku/mcp-server': [],
  'mongodb-mcp-server': [],
};

interface Gathered {
  package: string;
  version: string;
  server: string;
  tools: Record<string, unknown>[];
}

function binOf(dir: string, pkg: string): { script: string; version: string } | undefined {
  const root = join(dir, 'node_modules', pkg);
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    version: string;
    bin?: string | Record<string, string>;
    main?: string;
  };
  const bin = typeof manifest.bin === 'string' ? manifest.bin : Object.values(manifest.bin ?? {})[0];
  const script = bin ?? manifest.main;
  return script ? { script: join(root, script), version: manifest.version } : undefined;
}

/** A short server name for namespacing: the package name without scope noise. */
function serverName(pkg: string): string {
  return pkg
    .replace(/^@modelcontextprotocol\/server-/, '')
    .replace(/^@[^/]+\//, (s) => s.slice(1, -1) + '-')
    .replace(/(^|-)mcp(-server)?(-|$)|-?server-?/g, '$1')
    .replace(/[^A-Za-z0-9_-]/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 24);
}

async function gatherOne(dir: string, pkg: string): Promise<Gathered> {
  const found = binOf(dir, pkg);
  if (!found) throw new Error('no bin');
  const client = new Client({ name: 'catalog-gather', version: '1.0.0' });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [found.script, ...(ARGS[pkg] ?? [])],
    env: { ...(process.env as Record<string, string>), ...DUMMY_ENV },
    stderr: 'ignore',
  });
  let timer: NodeJS.Timeout | undefined;
  // A server that never answers (waiting on a database it cannot reach) is given up after 30 s.
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      void transport.close();
      reject(new Error('no tools/list within 30 s'));
    }, 30_000);
  });
  try {
    await Promise.race([client.connect(transport), timeout]);
    const listed = await Promise.race([client.listTools(), timeout]);
    const tools = listed.tools as unknown as Record<string, unknown>[];
    return { package: pkg, version: found.version, server: serverName(pkg), tools };
  } finally {
    clearTimeout(timer);
    await client.close().catch(() => undefined);
  }
}

async function main(): Promise<void> {
  const dir = process.argv[2] ?? '/tmp/catalog-gather';
  const out = process.argv[3] ?? new URL('../../../bench/fixtures/catalog/real-tools.json', import.meta.url);
  // Every list of packages in the directory (pkgs*.txt, one name a line), each package once.
  const lists = readdirSync(dir).filter((f) => /^pkgs.*\.txt$/.test(f));
  const pkgs = [
    ...new Set(lists.flatMap((f) => readFileSync(join(dir, f), 'utf8').split('\n')).filter(Boolean)),
  ];
  const gathered: Gathered[] = [];
  for (const pkg of pkgs) {
    const home = join(dir, 'pk', pkg.replace(/[/@]/g, '_'));
    if (!existsSync(join(home, 'node_modules', pkg))) {
      process.stderr.write(`skip ${pkg}: not installed\n`);
      continue;
    }
    try {
      const g = await gatherOne(home, pkg);
      process.stderr.write(`${pkg}@${g.version}: ${g.tools.length} tools\n`);
      if (g.tools.length) gathered.push(g);
    } catch (err) {
      process.stderr.write(`fail ${pkg}: ${(err as Error).message}\n`);
    }
  }
  // Distinct server names: two packages shortening alike get a suffix.
  const seen = new Map<string, number>();
  for (const g of gathered) {
    const n = seen.get(g.server) ?? 0;
    seen.set(g.server, n + 1);
    if (n) g.server = `${g.server}${n + 1}`;
  }
  const total = gathered.reduce((s, g) => s + g.tools.length, 0);
  writeFileSync(
    out,
    JSON.stringify({ gatheredAt: new Date().toISOString().slice(0, 10), total, servers: gathered }, null, 1) +
      '\n',
  );
  process.stderr.write(`${total} tools from ${gathered.length} packages\n`);
  process.exit(0);
}

await main();
