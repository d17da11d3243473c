// `npm run bench -- catalog-modes`: the real switchboard over a catalog of real tool definitions
// (bench/fixtures/catalog/real-tools.json, served per original server by fixture-server.ts).
// Prints the tokens a host receives for tools/list in full mode against search mode (the
// meta-tools plus a typical search answer), counted with js-tiktoken, and the retrieval quality of
// search_tools (recall@1, recall@5, MRR) on the tuning task set and, separately, the held-out one.
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { getEncoding } from 'js-tiktoken';
import { Config } from '../../src/config/schema.js';
import { createLogger } from '../../src/log.js';
import { startSwitchboard } from '../../src/switchboard.js';
import { codeModeJob } from './code-mode-job.js';

const ENCODING = 'o200k_base';
const FIXTURE = fileURLToPath(new URL('../../../bench/fixtures/catalog/real-tools.json', import.meta.url));
const TASKS = (file: string) =>
  JSON.parse(
    readFileSync(fileURLToPath(new URL(`../../../bench/catalog/${file}`, import.meta.url)), 'utf8'),
  ) as {
    task: string;
    server: string;
    tool: string;
  }[];
const SERVER = fileURLToPath(new URL('./fixture-server.js', import.meta.url));

interface Quality {
  tasks: number;
  missing: string[];
  recall1: number;
  recall5: number;
  mrr: number;
}

export async function runCatalogModes(_argv: readonly string[]): Promise<number> {
  const data = JSON.parse(readFileSync(FIXTURE, 'utf8')) as {
    total: number;
    servers: { server: string; package: string; version: string; tools: unknown[] }[];
  };
  const servers = Object.fromEntries(
    data.servers.map((s) => [
      s.server,
      { command: process.execPath, args: [SERVER, '--file', FIXTURE, '--server', s.server] },
    ]),
  );
  const config = Config.parse({
    servers,
    namespacing: { mode: 'always', collisions: 'priority' },
    catalog: { profiles: { search: { mode: 'search' } } },
    http: { port: 0 },
    startup: { waitMs: 60_000 },
  });
  const sb = await startSwitchboard({ config, http: true, log: createLogger('silent') });
  try {
    const base = sb.http!.url;
    const full = await connect(base);
    const search = await connect(`${base}/search`);
    const enc = getEncoding(ENCODING);
    const tokens = (v: unknown) => enc.encode(JSON.stringify(v)).length;
    const fullList = await full.listTools();
    const searchList = await search.listTools();
    const typical = await search.callTool({ name: 'search_tools', arguments: { query: 'create an issue' } });
    const fullTokens = tokens(fullList.tools);
    const searchTokens = tokens(searchList.tools) + tokens(typical.content);
    const names = new Set(fullList.tools.map((t) => t.name));
    const out: string[] = [];
    out.push(
      `catalog: ${fullList.tools.length} tools listed from ${data.servers.length} servers (${data.total} gathered)`,
    );
    out.push(`tokens (${ENCODING}, JSON of what the host receives):`);
    out.push(`  full mode   tools/list                              ${fullTokens}`);
    out.push(
      `  search mode tools/list + one search_tools answer    ${searchTokens}  (${(fullTokens / searchTokens).toFixed(1)}x fewer)`,
    );
    for (const [label, file] of [
      ['tuning', 'tasks-tuning.json'],
      ['held-out', 'tasks-held-out.json'],
    ] as const) {
      if (!existsSync(fileURLToPath(new URL(`../../../bench/catalog/${file}`, import.meta.url)))) {
        out.push(`search quality, ${label} set: bench/catalog/${file} is missing`);
        continue;
      }
      const q = await quality(search, TASKS(file), names);
      out.push(
        `search quality, ${label} set (${q.tasks} tasks): recall@1 ${q.recall1.toFixed(3)}  recall@5 ${q.recall5.toFixed(3)}  MRR ${q.mrr.toFixed(3)}` +
          (q.missing.length ? `  (${q.missing.length} tasks name a tool not in the catalog, left out)` : ''),
      );
    }
    out.push(...(await codeModeJob()));
    process.stdout.write(out.join('\n') + '\n');
    await full.close();
    await search.close();
    return 0;
  } finally {
    await sb.stop();
  }
}

async function connect(url: string): Promise<Client> {
  const c = new Client({ name: 'catalog-bench', version: '1.0.0' });
  await c.connect(new StreamableHTTPClientTransport(new URL(url)));
  return c;
}

async function quality(
  c: Client,
  tasks: { task: string; server: string; tool: string }[],
  names: Set<string>,
): Promise<Quality> {
  let r1 = 0;
  let r5 = 0;
  let rr = 0;
  let n = 0;
  const missing: string[] = [];
  for (const t of tasks) {
    const want = `${t.server}_${t.tool}`;
    if (!names.has(want)) {
      missing.push(want);
      continue;
    }
    n++;
    const answer = await c.callTool({ name: 'search_tools', arguments: { query: t.task, limit: 10 } });
    const got = ((answer.structuredContent as { tools: { name: string }[] }).tools ?? []).map((x) => x.name);
    const rank = got.indexOf(want);
    if (rank === 0) r1++;
    if (rank >= 0 && rank < 5) r5++;
    if (rank >= 0) rr += 1 / (rank + 1);
    if (process.env.CATALOG_BENCH_VERBOSE && rank !== 0)
      process.stderr.write(`miss(${rank}) ${want} <- "${t.task}": ${got.slice(0, 3).join(', ')}\n`);
  }
  return { tasks: n, missing, recall1: r1 / (n || 1), recall5: r5 / (n || 1), mrr: rr / (n || 1) };
}
