// `switchboard tools`: the catalog as a host sees it (exposed name, server, title), with what the
// trust layer knows of each tool (pinned, held and why, scanner findings), from the admin API.
import { AdminClient, AdminClientError, ADMIN_OPTIONS, ADMIN_OPTIONS_USAGE } from './admin-client.js';
import type { toolsView } from '../admin/admin-views.js';
import { processIo, parseCommand, type CommandIo } from './io.js';
import { table } from './status.js';

export const TOOLS_USAGE = `Usage: switchboard tools [--json] [options]

Lists the tools of the running switchboard's catalog: the exposed name a host calls, the server
that owns it, its title, its pin state (pinned, held:<why>, unpinned, off) and scanner findings,
then the definitions held for review.

  --json    the admin API's answer as it is (GET /api/v1/tools)

${ADMIN_OPTIONS_USAGE}`;

type Tools = ReturnType<typeof toolsView>;

export async function runTools(argv: string[], io: CommandIo = processIo): Promise<number> {
  const parsed = parseCommand('tools', TOOLS_USAGE, argv, ADMIN_OPTIONS, io);
  if (!parsed) return 2;
  const { values: v, positionals } = parsed;
  if (v.help) {
    io.out(TOOLS_USAGE);
    return 0;
  }
  if (positionals.length) {
    io.err(`switchboard tools: unexpected argument "${positionals[0]}"\n\n${TOOLS_USAGE}`);
    return 2;
  }
  let tools: Tools;
  try {
    tools = (await AdminClient.find(v).get('/api/v1/tools')) as Tools;
  } catch (err) {
    if (!(err instanceof AdminClientError)) throw err;
    io.err(`switchboard tools: ${err.message}`);
    return 1;
  }
  if (v.json) {
    io.out(JSON.stringify(tools, null, 2));
    return 0;
  }
  io.out(
    table(
      ['TOOL', 'SERVER', 'PIN', 'FLAGS', 'TITLE'],
      tools.tools.map((t) => [
        t.name,
        t.backend ?? '',
        t.pin,
        t.flags.map((f) => f.kind).join(',') || '-',
        t.title ?? '',
      ]),
    ),
  );
  for (const h of tools.held)
    io.out(
      `held: ${h.backend}/${h.name} (${h.reason})${h.flags.length ? `: ${h.flags.map((f) => f.reason).join('; ')}` : ''}` +
        ` — review with switchboard pins diff ${h.backend} ${h.name}`,
    );
  return 0;
}
